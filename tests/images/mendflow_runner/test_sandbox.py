"""The offline sandbox every repository step runs in (``mendflow_runner.proc.sandbox``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mendflow_runner.proc import (
    JOB_DIR,
    SANDBOX_STARTS,
    Log,
    _loopback_hosts,
    run,
    sandbox,
    sandbox_group,
    sandbox_passwd,
)

RESOLVE = "import socket, sys; print(socket.getaddrinfo('localhost', 80, int(sys.argv[1]))[0][4][0])"


@pytest.mark.parametrize(("family", "address"), [(2, "127.0.0.1"), (10, "::1")])  # AF_INET, AF_INET6
def test_localhost_resolves_on_both_loopbacks_with_no_network(tmp_path: Path, family: int, address: str) -> None:
    # pino-std-serializers' tests connect to their own server at "::" by name; offline, no DNS server answers
    # sandbox, not offline alone: it binds back this interpreter's venv when it lives under /tmp (a clone there)
    argv = sandbox(tmp_path)([sys.executable, "-c", RESOLVE, str(family)])
    assert argv[0].endswith("bwrap")
    assert subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip() == address


def test_a_removed_hosts_file_is_written_again(tmp_path: Path) -> None:
    # a temp cleaner may remove what the runner wrote under /tmp; the next sandbox must still start
    if not (first := _loopback_hosts()):
        pytest.skip("this machine's /etc/hosts names localhost on both loopbacks")
    Path(first[1]).unlink()
    argv = sandbox(tmp_path)([sys.executable, "-c", RESOLVE, "10"])
    assert subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip() == "::1"


WRITE = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('changed')"


def test_a_mounted_tree_is_seen_in_place_and_read_only(tmp_path: Path) -> None:
    tree, place = tmp_path / "kept", tmp_path / "work" / "node_modules"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "index.js").write_text("kept")
    (place / "pkg").mkdir(parents=True)
    wrap = sandbox(tmp_path / "work", mounts=((tree / "pkg", place / "pkg"),))
    read = subprocess.run(wrap(["cat", str(place / "pkg" / "index.js")]), capture_output=True, text=True, check=True)
    assert read.stdout == "kept"
    wrote = subprocess.run(wrap([sys.executable, "-c", WRITE, str(place / "pkg" / "index.js")]), capture_output=True)
    assert (wrote.returncode, b"Read-only file system" in wrote.stderr) == (1, True)
    assert (tree / "pkg" / "index.js").read_text() == "kept"


def test_a_uid_the_machine_does_not_name_gets_an_entry_with_the_jobs_home() -> None:
    unnamed = 1_600_999_999  # the local launcher's job ids start at 1,600,000,000; no account uses them
    passwd = sandbox_passwd(unnamed, unnamed, "/w/ws/home")
    entry = f"mendflow:x:{unnamed}:{unnamed}:mendflow job:/w/ws/home:/usr/sbin/nologin\n"
    assert passwd is not None and passwd.endswith(entry)


def test_a_gid_the_machine_does_not_name_gets_a_group() -> None:
    unnamed = 1_600_999_999
    group = sandbox_group(unnamed)
    assert group is not None and group.endswith(f"mendflow:x:{unnamed}:\n")


def test_a_gid_the_machine_names_keeps_the_machines_group() -> None:
    assert sandbox_group(0) is None


def test_a_uid_the_machine_names_keeps_the_machines_passwd() -> None:
    assert sandbox_passwd(0, 0, "/w/ws/home") is None


# A stand-in for bwrap, named so: it fails its first ``LOST`` starts as bwrap 0.8.0 does when a mount goes while it
# copies the mount table (the CNI network namespace of a pod the real node started beside), then runs the command.
RACING_BWRAP = """#!/bin/sh
REMOUNT='remount "/newroot/run/netns/cni-1": No such file or directory'
count="$(cat "$STARTS" 2>/dev/null || echo 0)"; echo $((count + 1)) > "$STARTS"
if [ "$count" -lt "$LOST" ]; then
  echo "bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: $REMOUNT" >&2
  exit 1
fi
shift 2; exec "$@"
"""


def _racing_bwrap(tmp_path: Path, lost: int) -> tuple[list[str], dict[str, str]]:
    bwrap = tmp_path / "bin" / "bwrap"
    bwrap.parent.mkdir()
    bwrap.write_text(RACING_BWRAP)
    bwrap.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "STARTS": str(tmp_path / "starts"), "LOST": str(lost)}
    return [str(bwrap), "--ro-bind-stand-in", "--", sys.executable, "-c", "print('ran')"], env


def test_a_sandbox_start_lost_to_a_changing_mount_table_is_tried_again(tmp_path: Path) -> None:
    argv, env = _racing_bwrap(tmp_path, lost=1)
    r = run(argv, cwd=tmp_path, env=env, timeout=60, log=Log(tmp_path / "log"))
    assert (r.ok, r.stdout.strip(), (tmp_path / "starts").read_text().strip()) == (True, "ran", "2")


def test_a_sandbox_that_keeps_losing_its_start_fails_after_its_last_try(tmp_path: Path) -> None:
    argv, env = _racing_bwrap(tmp_path, lost=SANDBOX_STARTS)
    r = run(argv, cwd=tmp_path, env=env, timeout=60, log=Log(tmp_path / "log"))
    assert (r.returncode, (tmp_path / "starts").read_text().strip()) == (1, str(SANDBOX_STARTS))


def test_a_command_failing_in_its_sandbox_runs_once(tmp_path: Path) -> None:
    fail = "import sys; open('ran', 'a').write('x'); sys.exit('1 failed')"
    argv = sandbox(tmp_path)([sys.executable, "-c", fail])
    r = run(argv, cwd=tmp_path, env={}, timeout=60, log=Log(tmp_path / "log"))
    assert (r.returncode, (tmp_path / "ran").read_text()) == (1, "x")


MAKE_FILE = "import pathlib; pathlib.Path('made').write_text('x')"


def _mode_made(tmp_path: Path, wrap: Callable[[list[str]], list[str]]) -> int:
    old = os.umask(0o007)  # the local launcher's job umask
    try:
        r = run(wrap([sys.executable, "-c", MAKE_FILE]), cwd=tmp_path, env={}, timeout=60, log=Log(tmp_path / "log"))
    finally:
        os.umask(old)
    assert r.ok, r.stderr
    return (tmp_path / "made").stat().st_mode & 0o777


def test_a_file_a_sandboxed_command_makes_is_readable_by_others_as_a_developers_umask_makes_it(
    tmp_path: Path,
) -> None:
    # tempfile 3.27.0's doctest: a file it makes with 0o666 must be world-readable after the umask
    assert _mode_made(tmp_path, sandbox(tmp_path)) == 0o664


def test_a_command_outside_a_sandbox_keeps_the_jobs_umask(tmp_path: Path) -> None:
    assert _mode_made(tmp_path, lambda argv: argv) == 0o660


@pytest.mark.parametrize(("home_in_job", "writes"), [(True, 0), (False, 1)])
def test_only_a_jobs_own_home_may_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home_in_job: bool, writes: int
) -> None:
    # as a pod's HOME=/tmp: adrg/xdg 0.5.3's tests create files under ~/.local/share; a home outside the job's
    # directory (the runner run by hand, a developer's) stays read-only
    job = tmp_path / "jobs" / "id"  # the sandbox shows jobs/ holding this job alone
    home = job / "ws" / "home" if home_in_job else tmp_path / "home"
    home.mkdir(parents=True)
    (job / "ws" / "work").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv(JOB_DIR, str(job))
    monkeypatch.setenv("HOME", str(home))
    argv = sandbox(job / "ws" / "work")([sys.executable, "-c", WRITE, str(home / "made")])
    assert subprocess.run(argv, capture_output=True).returncode == writes
    assert (home / "made").exists() is home_in_job
