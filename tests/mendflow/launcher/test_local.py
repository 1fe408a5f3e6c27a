"""LocalLauncher with real processes: privilege drop, clean environment, limits, timeouts and cleanup."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mendflow.contracts import BuildReport, BuildStatus, FailReason
from mendflow.launcher.base import JobSpec, JobState, is_credential
from mendflow.launcher.cgroups import JobCgroups
from mendflow.launcher.local import JOB_MARKER, LocalLauncher, cache_key
from mendflow.settings import Settings
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import PYPROJECT, demo_files, snapshot

RUNNER = [
    "python",
    "-m",
    "mendflow_runner",
    "--source",
    "{workspace}/in/source.tar.gz",
    "--out",
    "{workspace}/out",
]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="dropping privileges needs root")


@pytest.fixture
def launcher(tmp_path: Path) -> LocalLauncher:
    return LocalLauncher(Settings(state_dir=tmp_path / "state", cache_dir=tmp_path / "cache"))


def script_job(code: str, tmp_path: Path, **kw: object) -> JobSpec:
    """A job running a python snippet that writes out/result.json, delivered to tmp_path/result.json."""
    return JobSpec(
        name="probe",
        command=["python", "-c", code],
        outputs={"result.json": (tmp_path / "result.json").as_uri()},
        **kw,  # type: ignore[arg-type]
    )


def build_job(repo: Path, tmp_path: Path, **kw: object) -> JobSpec:
    return JobSpec(
        name="build",
        command=RUNNER,
        env={"MENDFLOW_JOB_REPO": "demo", "MENDFLOW_JOB_COMMIT": "c0ffee"},
        inputs={"source.tar.gz": snapshot(repo, tmp_path / "src.tar.gz").as_uri()},
        outputs={"report.json": (tmp_path / "report.json").as_uri()},
        **kw,  # type: ignore[arg-type]
    )


def _processes_with(tag: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow
def test_runner_job_builds_and_delivers_a_valid_report(
    launcher: LocalLauncher, make_repo: RepoFactory, tmp_path: Path
) -> None:
    result = launcher.run(build_job(make_repo(demo_files()), tmp_path))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert result.outputs == {"report.json": (tmp_path / "report.json").as_uri()}
    report = BuildReport.model_validate_json((tmp_path / "report.json").read_text())
    assert (report.status, report.commit_sha, report.tests.passed) == (BuildStatus.PASSED, "c0ffee", 2)
    assert "status PASSED" in result.log_tail


def _ids_of_concurrent_jobs(launcher: LocalLauncher, tmp_path: Path) -> list[list[object]]:
    code = (
        "import os, json, time; json.dump([os.getuid(), os.getgid(), os.getgroups()], open('out/result.json', 'w'))"
        "; time.sleep(1)"
    )
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir()
    with ThreadPoolExecutor(2) as pool:  # at once: each holds its claim while the other starts
        results = list(pool.map(lambda d: launcher.run(script_job(code, d)), dirs))
    assert all(r.state == JobState.SUCCEEDED for r in results), [r.log_tail for r in results]
    return [json.loads((d / "result.json").read_text()) for d in dirs]


@ROOT_ONLY
def test_each_job_runs_as_a_uid_of_its_own(launcher: LocalLauncher, tmp_path: Path) -> None:
    (uid_a, gid_a, groups_a), (uid_b, gid_b, groups_b) = _ids_of_concurrent_jobs(launcher, tmp_path)

    assert uid_a != uid_b and (gid_a, gid_b) == (uid_a, uid_b) and groups_a == groups_b == []
    assert all(launcher.settings.sandbox.job_ids_start <= uid for uid in (uid_a, uid_b))  # type: ignore[operator]
    assert not [uid for uid in (uid_a, uid_b) if (launcher.ids.root / str(uid)).exists()]  # claims went with them


# commons-compress 1.28.0's tests archive files they wrote in ustar's format, whose owner fields hold 7 octal digits
@ROOT_ONLY
def test_a_jobs_files_fit_a_ustar_archives_owner_fields(launcher: LocalLauncher, tmp_path: Path) -> None:
    code = (
        "import pathlib, tarfile; pathlib.Path('out/f').write_text('x')"
        "; tarfile.open('out/a.tar', 'w', format=tarfile.USTAR_FORMAT).add('out/f')"
    )
    result = launcher.run(script_job(code, tmp_path))
    assert result.state == JobState.SUCCEEDED, result.log_tail


# A test that starts a process with no environment at all: it finds its home by its uid (pino-pretty 13.0.0's CLI
# tests spawn it with TERM and TZ alone, and Node's os.homedir() threw ENOENT for a job's uid); the one its uid names
# is the job's HOME, as on a developer's machine (go-homedir 1.1.0's TestDir compares the two).
HOMELESS_TEST = """import os, subprocess, sys

import pytest


@pytest.mark.fast
def test_a_process_started_without_home_finds_one():
    said = subprocess.run([sys.executable, "-c", "import os.path; print(os.path.expanduser('~'))"], env={},
                          capture_output=True, text=True, check=True)
    assert said.stdout.strip() == os.environ["HOME"]
"""


@pytest.mark.slow
@ROOT_ONLY
def test_a_jobs_uid_has_a_name_and_a_home_in_its_sandbox(
    launcher: LocalLauncher, make_repo: RepoFactory, tmp_path: Path
) -> None:
    repo = make_repo(demo_files(**{"tests/test_homeless.py": HOMELESS_TEST}))
    result = launcher.run(build_job(repo, tmp_path))
    report = BuildReport.model_validate_json((tmp_path / "report.json").read_text())
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), result.log_tail


# anyio 4.16.0's test_group: the group of a file a test makes has a name, as in a container (getgrgid() failed)
GROUP_TEST = """import grp, os

import pytest


@pytest.mark.fast
def test_the_group_of_a_file_made_has_a_name(tmp_path):
    assert grp.getgrgid(os.stat(tmp_path).st_gid).gr_name
"""


@pytest.mark.slow
@ROOT_ONLY
def test_a_jobs_gid_has_a_name_in_its_sandbox(launcher: LocalLauncher, make_repo: RepoFactory, tmp_path: Path) -> None:
    repo = make_repo(demo_files(**{"tests/test_group.py": GROUP_TEST}))
    result = launcher.run(build_job(repo, tmp_path))
    report = BuildReport.model_validate_json((tmp_path / "report.json").read_text())
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), result.log_tail


# typed-argument-parser 1.12.0's tests commit to git repositories of their own and configure no identity (its CI's
# workflow sets one); one that configures its own keeps it.
GIT_TEST = """import subprocess

import pytest


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.fast
def test_a_commit_needs_no_identity_of_its_own(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    assert git(tmp_path, "log", "--format=%an <%ae>") == "mendflow job <job@mendflow.invalid>"


@pytest.mark.fast
def test_an_identity_a_test_configures_is_its_own(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "tester@example.com")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "first")
    assert git(tmp_path, "log", "--format=%ae") == "tester@example.com"
"""


@pytest.mark.slow
@ROOT_ONLY
def test_a_test_can_commit_to_a_git_repository_of_its_own(
    launcher: LocalLauncher, make_repo: RepoFactory, tmp_path: Path
) -> None:
    repo = make_repo(demo_files(**{"tests/test_git.py": GIT_TEST}))
    result = launcher.run(build_job(repo, tmp_path))
    report = BuildReport.model_validate_json((tmp_path / "report.json").read_text())
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 4), result.log_tail


def _cache_job(scope: str, code: str, tmp_path: Path) -> JobSpec:
    return script_job(code + "\nopen('out/result.json', 'w').write(json.dumps(res))", tmp_path, cache_scope=scope)


@ROOT_ONLY
def test_a_repositorys_jobs_share_its_cache_and_no_other_repository_reads_it(
    launcher: LocalLauncher, tmp_path: Path
) -> None:
    run = uuid.uuid4().hex[:8]
    cache_a = launcher.caches / cache_key(f"a-{run}")
    write = "import json, os\nres = 'ok'\nopen(os.environ['UV_CACHE_DIR'] + '/wheel', 'a').write('a')"
    read = (
        "import json\ntry:\n"
        f"    res = open({str(cache_a / 'wheel')!r}, 'a').write('b') and 'changed'\n"
        "except PermissionError:\n    res = 'denied'"
    )
    outcomes = []
    for scope, code in ((f"a-{run}", write), (f"b-{run}", read), (f"a-{run}", write)):
        out = tmp_path / str(len(outcomes))
        out.mkdir()
        result = launcher.run(_cache_job(scope, code, out))
        assert result.state == JobState.SUCCEEDED, result.log_tail
        outcomes.append(json.loads((out / "result.json").read_text()))

    assert outcomes == ["ok", "denied", "ok"]  # the second job of repository a changed what its first wrote
    assert (cache_a / "wheel").read_text() == "aa"


@contextlib.contextmanager
def _base_with_caches(tmp_path: Path, *names: str) -> Iterator[tuple[LocalLauncher, list[Path]]]:
    """A launcher of its own base (a job dropped to its uid must reach it), and a cache made by a job of each
    repository named."""
    run = uuid.uuid4().hex[:8]
    base = Path(f"/var/tmp/mendflow-caches-{run}")
    launcher = LocalLauncher(Settings(cache_dir=tmp_path / "c", sandbox={"local_base_dir": base}))
    try:
        for name in names:
            result = launcher.run(_cache_job(f"{name}-{run}", "import json\nres = 'ok'", tmp_path))
            assert result.state == JobState.SUCCEEDED, result.log_tail
        yield launcher, [launcher.caches / cache_key(f"{name}-{run}") for name in names]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_reap_evicts_a_repositorys_cache_unused_past_the_idle_age(tmp_path: Path) -> None:
    with _base_with_caches(tmp_path, "old", "new") as (launcher, (old, new)):
        month_ago = time.time() - 30 * 86400
        os.utime(old, (month_ago, month_ago))
        group = old.stat().st_gid

        assert launcher.reap() == [f"dependency cache {old.name}"]
        assert (old.exists(), new.exists()) == (False, True)
        assert not launcher.drops or not (launcher.ids.root / str(group)).exists()  # its group's claim went too


def test_the_caches_named_are_removed_whatever_their_age_and_the_others_stay(tmp_path: Path) -> None:
    with _base_with_caches(tmp_path, "gone", "kept") as (launcher, (gone, kept)):
        group = gone.stat().st_gid

        launcher.remove_caches({gone.name, "no-such-cache"})

        assert launcher.cache_names() == {kept.name}
        assert not launcher.drops or not (launcher.ids.root / str(group)).exists()  # its group's claim went too


@ROOT_ONLY
def test_what_a_job_leaves_in_the_shared_temp_dirs_goes_with_it(launcher: LocalLauncher, tmp_path: Path) -> None:
    left = [Path(d) / f"mendflow-left-{uuid.uuid4().hex}" for d in ("/tmp", "/dev/shm", "/var/tmp")]
    code = (
        f"import os\nfor p in {[str(p) for p in left]!r}:\n    os.makedirs(p + '/deep')\nopen('out/result.json', 'w')"
    )
    try:
        result = launcher.run(script_job(code, tmp_path))
        assert result.state == JobState.SUCCEEDED, result.log_tail
        assert [p for p in left if p.exists()] == []
    finally:
        for p in left:
            shutil.rmtree(p, ignore_errors=True)


def test_a_finished_jobs_directory_leaves_at_once_and_is_deleted_from_the_root_only_trash(
    launcher: LocalLauncher, tmp_path: Path
) -> None:
    code = f"import os\nopen('out/result.json', 'w').write(os.environ[{JOB_MARKER!r}])"
    assert launcher.run(script_job(code, tmp_path)).state == JobState.SUCCEEDED
    job_id = (tmp_path / "result.json").read_text()
    assert not (launcher.base / "jobs" / job_id).exists()
    assert stat.S_IMODE(launcher.trash.stat().st_mode) == 0o700
    deadline = time.monotonic() + 10
    while (launcher.trash / job_id).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not (launcher.trash / job_id).exists()


@ROOT_ONLY
def test_a_job_can_list_the_directory_its_workspace_is_in(launcher: LocalLauncher, tmp_path: Path) -> None:
    code = "import json, os\njson.dump(os.listdir(os.path.dirname(os.getcwd())), open('out/result.json', 'w'))"
    result = launcher.run(script_job(code, tmp_path))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert "ws" in json.loads((tmp_path / "result.json").read_text())


# In a step's sandbox (mendflow_runner.proc.offline), as the repository's tests run: every parent of TMPDIR.
LIST_PARENTS = """
import json, os, subprocess, sys
from pathlib import Path
from mendflow_runner import proc
code = "import json, os, pathlib; print(json.dumps([sorted(os.listdir(p)) for p in pathlib.Path(os.environ['TMPDIR'])."
code += "parents]))"
found = subprocess.run(proc.offline([sys.executable, "-c", code], Path.cwd()), capture_output=True, text=True)
json.dump([found.returncode, found.stderr, json.loads(found.stdout or "[]")], open("out/result.json", "w"))
"""


@ROOT_ONLY
def test_a_sandboxed_step_lists_every_parent_and_sees_no_other_job(launcher: LocalLauncher, tmp_path: Path) -> None:
    """pytest-mypy-plugins lists each parent of its cache (attrs' 86 mypy tests); jobs/ shows this job alone."""
    other = launcher.base / "jobs" / f"build-other-{tmp_path.name}"
    other.mkdir(parents=True)
    try:
        result = launcher.run(script_job(LIST_PARENTS, tmp_path))
    finally:
        other.rmdir()
    assert result.state == JobState.SUCCEEDED, result.log_tail
    returncode, stderr, listings = json.loads((tmp_path / "result.json").read_text())
    assert returncode == 0, stderr
    jobs = listings[2]  # TMPDIR is jobs/<id>/ws/tmp: ws, <id>, then jobs/
    assert len(jobs) == 1 and jobs[0] != other.name


def test_reap_empties_the_trash_a_killed_deletion_left(tmp_path: Path) -> None:
    base = tmp_path / "base"
    (base / "trash" / "build-b1-0123abcd" / "ws" / "node_modules").mkdir(parents=True)
    launcher = LocalLauncher(Settings(cache_dir=tmp_path / "c", sandbox={"local_base_dir": base}))
    launcher.reap()
    assert list(launcher.trash.iterdir()) == []


@ROOT_ONLY
def test_job_cannot_write_outside_its_workspace(launcher: LocalLauncher, tmp_path: Path) -> None:
    targets = [
        str(tmp_path / "escape.txt"),
        "/root/escape.txt",
        "/work/main/escape.txt",
        "/var/tmp/mendflow/escape",
    ]
    code = (
        "import json\nres = {}\n"
        f"for t in {targets!r}:\n"
        "    try:\n        open(t, 'w').write('x'); res[t] = 'written'\n"
        "    except PermissionError: res[t] = 'denied'\n"
        "json.dump(res, open('out/result.json', 'w'))\n"
    )
    result = launcher.run(script_job(code, tmp_path))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert json.loads((tmp_path / "result.json").read_text()) == dict.fromkeys(targets, "denied")


def test_output_symlink_to_a_host_file_is_not_delivered(launcher: LocalLauncher, tmp_path: Path) -> None:
    code = "import os; os.symlink('/etc/passwd', 'out/result.json')"
    result = launcher.run(script_job(code, tmp_path))
    assert result.outputs == {} and not (tmp_path / "result.json").exists()
    assert "not delivered" in result.log_tail


@pytest.mark.parametrize(
    ("image", "found"),
    [("ci-runner-python", {"uv": True, "ruff": True}), ("ci-runner-go", {"uv": False, "ruff": False, "go": True})],
)
def test_a_job_finds_the_tools_its_image_brings_and_not_another_images(
    launcher: LocalLauncher, tmp_path: Path, image: str, found: dict[str, bool]
) -> None:
    # ardanlabs/jinja 1.8.0 runs `uv` when a test finds it, and skips without it, as in the Go image.
    which = f"{{t: bool(shutil.which(t)) for t in {list(found)!r}}}"
    code = f"import json, shutil; json.dump({which}, open('out/result.json', 'w'))"
    result = launcher.run(script_job(code, tmp_path, image=image))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert json.loads((tmp_path / "result.json").read_text()) == found


def test_a_jobs_shell_is_bash(launcher: LocalLauncher, tmp_path: Path) -> None:
    # dynamic-dedupe 0.3.0's `nave use 0.8` runs "$SHELL", as a CI runner's login shell.
    code = (
        "import json, os, subprocess; json.dump(subprocess.run([os.environ['SHELL'], '-c', 'echo $BASH_VERSION'], "
        "capture_output=True, text=True).stdout.strip(), open('out/result.json', 'w'))"
    )
    result = launcher.run(script_job(code, tmp_path))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert json.loads((tmp_path / "result.json").read_text()).startswith("5.")


def test_nonzero_exit_is_failed_with_the_last_line(launcher: LocalLauncher, tmp_path: Path) -> None:
    result = launcher.run(script_job("import sys; print('it broke'); sys.exit(3)", tmp_path))
    assert (result.state, result.exit_code) == (JobState.FAILED, 3)
    assert result.reason is not None and "it broke" in result.reason


def test_a_job_ignores_no_signal_the_trusted_side_was_started_ignoring(launcher: LocalLauncher, tmp_path: Path) -> None:
    # nohup ignores SIGHUP, a script's background command SIGINT and SIGQUIT; exec would keep each ignored
    names = ("SIGHUP", "SIGINT", "SIGQUIT")
    code = (
        "import json, signal\n"
        f"ignored = [n for n in {names!r} if signal.getsignal(getattr(signal, n)) == signal.SIG_IGN]\n"
        "json.dump(ignored, open('out/result.json', 'w'))\n"
    )
    before = {name: signal.signal(getattr(signal, name), signal.SIG_IGN) for name in names}
    try:
        result = launcher.run(script_job(code, tmp_path))
    finally:
        for name, handler in before.items():
            signal.signal(getattr(signal, name), handler)
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert json.loads((tmp_path / "result.json").read_text()) == []


def test_timeout_kills_the_job_and_every_straggler(launcher: LocalLauncher, tmp_path: Path) -> None:
    tag = f"mendflow-straggler-{uuid.uuid4().hex}"
    # A daemon in its own session (escapes the process group) plus a busy parent.
    code = (
        "import subprocess, time\n"
        f"argv = ['python', '-c', 'import time; time.sleep(600)', {tag!r}]\n"
        "subprocess.Popen(argv, start_new_session=True)\n"
        "while True: time.sleep(0.1)\n"
    )
    result = launcher.run(script_job(code, tmp_path, timeout_sec=3))
    assert result.state == JobState.TIMED_OUT
    assert _processes_with(tag) == []


def test_background_process_is_killed_after_a_normal_exit(launcher: LocalLauncher, tmp_path: Path) -> None:
    tag = f"mendflow-daemon-{uuid.uuid4().hex}"
    code = f"import subprocess; subprocess.Popen(['sleep', '600', {tag!r}], start_new_session=True)"
    result = launcher.run(script_job(code, tmp_path))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert _processes_with(tag) == []


@pytest.mark.slow
def test_infinite_loop_in_a_test_times_out_and_leaves_nothing(
    launcher: LocalLauncher, make_repo: RepoFactory, tmp_path: Path
) -> None:
    tag = f"mendflow-loop-{uuid.uuid4().hex}"
    loop = (
        "import subprocess\n\n\ndef test_forever() -> None:\n"
        f"    subprocess.Popen(['sleep', '600', {tag!r}], start_new_session=True)\n"
        "    while True:\n        pass\n"
    )
    repo = make_repo(demo_files(**{"tests/test_demo.py": loop, "pyproject.toml": PYPROJECT.replace("fast", "quick")}))
    spec = build_job(repo, tmp_path, timeout_sec=20)
    spec.env["MENDFLOW_JOB_TIMEOUT_SEC"] = "900"  # the runner believes it has time; the launcher's limit hits
    result = launcher.run(spec)
    assert result.state == JobState.TIMED_OUT, result.log_tail
    assert _processes_with(tag) == []


@pytest.mark.slow
def test_memory_hog_is_oom(launcher: LocalLauncher, make_repo: RepoFactory, tmp_path: Path) -> None:
    hog = (
        "def test_hog() -> None:\n    blocks = []\n    while True:\n        blocks.append(b'x' * (64 * 1024 * 1024))\n"
    )
    repo = make_repo(demo_files(**{"tests/test_demo.py": hog, "pyproject.toml": PYPROJECT.replace("fast", "quick")}))
    result = launcher.run(build_job(repo, tmp_path, memory_limit_mb=1024, timeout_sec=240))
    print(f"memory hog ended as {result.state}: {result.reason}")
    if result.state == JobState.OOM_KILLED:
        return  # the kernel killed the whole job: the launcher said so
    assert result.state == JobState.SUCCEEDED, result.log_tail
    report = BuildReport.model_validate_json((tmp_path / "report.json").read_text())
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.OOM)
    assert report.error_reason is not None and "tests/test_demo.py::test_hog" in report.error_reason


@pytest.mark.parametrize(
    "name", ["AWS_SESSION_TOKEN", "OPENAI_API_KEY", "MY_SECRET", "GITHUB_SHA", "KUBECONFIG", "SSH_AUTH_SOCK"]
)
def test_credential_like_names_are_recognised(name: str) -> None:
    assert is_credential(name)


@pytest.mark.parametrize("name", ["PATH_EXTRA", "MENDFLOW_JOB_REPO", "LANG", "PYTHONHASHSEED"])
def test_ordinary_names_pass(name: str) -> None:
    assert not is_credential(name)


@ROOT_ONLY
def test_a_base_dir_the_sandbox_uid_cannot_reach_is_refused_with_advice(tmp_path: Path) -> None:
    hidden = tmp_path / "private"
    hidden.mkdir(mode=0o700)
    settings = Settings(state_dir=tmp_path / "state", cache_dir=tmp_path / "cache")
    settings.sandbox.local_base_dir = hidden / "launcher"
    result = LocalLauncher(settings).run(script_job("print(1)", tmp_path))
    assert result.state is JobState.ERROR
    assert result.reason and "not searchable" in result.reason and "MENDFLOW_SANDBOX__LOCAL_BASE_DIR" in result.reason


def _writable(controller: str) -> bool:
    from mendflow.launcher.cgroups import own_group

    return own_group(controller) is not None


@pytest.mark.skipif(not _writable("pids"), reason="the pids cgroup controller is not writable here")
def test_a_fork_bomb_stays_inside_its_process_cap(launcher: LocalLauncher, tmp_path: Path) -> None:
    launcher.settings.sandbox.max_processes = 32
    code = (
        "import json, os, time\n"
        "started = refused = 0\n"
        "for _ in range(100):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError:\n"
        "        refused += 1\n"
        "        continue\n"
        "    if pid == 0:\n"
        "        time.sleep(30)\n"
        "        os._exit(0)\n"
        "    started += 1\n"
        "json.dump({'started': started, 'refused': refused}, open('out/result.json', 'w'))\n"
    )
    assert launcher.run(script_job(code, tmp_path, timeout_sec=60)).state == JobState.ERROR  # and says why (below)
    counts = json.loads((tmp_path / "result.json").read_text())
    assert counts["started"] < 32 and counts["refused"] > 60


@pytest.mark.skipif(not _writable("pids"), reason="the pids cgroup controller is not writable here")
def test_a_job_that_reaches_its_process_cap_is_an_error_that_names_it(launcher: LocalLauncher, tmp_path: Path) -> None:
    launcher.settings.sandbox.max_processes = 32
    code = (
        "import threading, time\n"
        "for _ in range(64):\n"
        "    try:\n"
        "        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "    except RuntimeError:\n"
        "        pass\n"
        "open('out/result.json', 'w').write('{}')\n"
    )
    result = launcher.run(script_job(code, tmp_path, timeout_sec=60))
    assert result.state == JobState.ERROR
    assert result.reason is not None and "cap of 32 processes and threads" in result.reason


@pytest.mark.skipif(not _writable("cpu"), reason="the cpu cgroup controller is not writable here")
def test_cpu_use_is_held_to_the_jobs_quota(launcher: LocalLauncher, tmp_path: Path) -> None:
    # Busy for 3 s of wall time; at a quota of 0.2 cores it may burn about 0.6 s of CPU, unthrottled 3 s.
    code = (
        "import json, os, time\n"
        "end = time.monotonic() + 3\n"
        "while time.monotonic() < end:\n"
        "    pass\n"
        "t = os.times()\n"
        "json.dump(t.user + t.system, open('out/result.json', 'w'))\n"
    )
    result = launcher.run(script_job(code, tmp_path, cpu_limit=0.2, timeout_sec=60))
    assert result.state == JobState.SUCCEEDED, result.log_tail
    assert json.loads((tmp_path / "result.json").read_text()) < 1.2


def _trusted_side(job_code: str, base: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """A trusted process of its own running one local job (``job_code``, a Python expression for the job's
    code) under ``base``; it can then be killed without its clean-up."""
    env = {**os.environ, "MENDFLOW_SANDBOX__LOCAL_BASE_DIR": str(base), "MENDFLOW_CACHE_DIR": str(tmp_path / "c")}
    trusted = textwrap.dedent(
        f"""
        from mendflow.launcher.base import JobSpec
        from mendflow.launcher.local import LocalLauncher, cache_key
        from mendflow.settings import Settings
        code = {job_code}
        LocalLauncher(Settings()).run(JobSpec(name="orphan", command=["python", "-c", code], timeout_sec=600))
        """
    )
    return subprocess.Popen([sys.executable, "-c", trusted], env=env)


def _wait_for(needle: str, present: bool = True, within: float = 60) -> bool:
    deadline = time.monotonic() + within
    while bool(_processes_with(needle)) != present and time.monotonic() < deadline:
        time.sleep(0.1)
    return bool(_processes_with(needle)) == present


@pytest.mark.slow
def test_a_job_dies_with_the_trusted_side_that_launched_it(tmp_path: Path) -> None:
    base = Path(f"/var/tmp/mendflow-pdeath-{uuid.uuid4().hex[:8]}")
    tag = f"mendflow-pdeath-{uuid.uuid4().hex}"
    # The needle is in the job's command line only: the trusted side's has the two halves apart.
    proc = _trusted_side(f'"import time; time.sleep(600)  # " + {tag!r}', base, tmp_path)
    try:
        assert _wait_for(f"# {tag}"), "the job never started"
        proc.kill()  # no clean-up runs
        proc.wait()
        assert _wait_for(f"# {tag}", present=False, within=5)
    finally:
        proc.kill()
        for pid in _processes_with(f"# {tag}"):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_reap_clears_what_a_killed_run_left_once_past_the_age(tmp_path: Path) -> None:
    base = Path(f"/var/tmp/mendflow-reap-{uuid.uuid4().hex[:8]}")  # its own base: reaping touches no other job
    tag = f"mendflow-orphan-{uuid.uuid4().hex}"
    # The job itself dies with the trusted side; a daemon it started in a session of its own is left over.
    sleeper = "['python', '-c', 'import time; time.sleep(600)', 'daemon-' + " + repr(tag) + "]"
    daemon = f"subprocess.Popen({sleeper}, start_new_session=True)"
    proc = _trusted_side(f'"import subprocess, time; {daemon}; time.sleep(600)  # " + {tag!r}', base, tmp_path)
    try:
        assert _wait_for(f"daemon-{tag}"), "the job never started"
        launcher = LocalLauncher(Settings(cache_dir=tmp_path / "c", sandbox={"local_base_dir": base}))
        assert launcher.reap(older_than_sec=0) == []  # its owner lives: however old, the job is left alone
        proc.kill()  # the trusted side dies without its clean-up
        proc.wait()
        assert launcher.reap(older_than_sec=3600) == []  # a young job is left alone too
        assert _processes_with(f"daemon-{tag}")

        reaped = launcher.reap(older_than_sec=0)
        assert len(reaped) == 1 and reaped[0].startswith("local job orphan-")
        assert _processes_with(f"daemon-{tag}") == []
        assert list((base / "jobs").iterdir()) == []
        assert list(launcher.ids.jobs()) == []  # its uid's claim too
        job_id = reaped[0].removeprefix("local job ")
        assert JobCgroups.existing(job_id).groups == {}
    finally:
        proc.kill()
        for pid in _processes_with(tag):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(base, ignore_errors=True)
