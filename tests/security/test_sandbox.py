"""A repository's tests cannot reach the host's loopback, leave files in /tmp, /var/tmp or /dev/shm, or change the
packages another repository's job installs; its install-time code reaches the package index and nothing else.
Each is checked from the outside after a real build."""

from __future__ import annotations

import uuid
from pathlib import Path

import pygit2
import pytest

from flows.ci import ci_build
from mendflow.contracts import BuildStatus, FailReason
from mendflow.identity import repo_id
from mendflow.launcher.local import cache_key
from tests.fixtures.listener import Listener
from tests.fixtures.repos import RepoFactory, commit_files

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "mendflow_env")]

PYPROJECT = '[project]\nname = "probe"\nversion = "0"\ndependencies = ["iniconfig==2.0.0"]\n'


def _build(make_repo: RepoFactory, name: str, test_body: str) -> BuildStatus:
    files = {"pyproject.toml": PYPROJECT, "probe/__init__.py": "", "tests/test_probe.py": test_body}
    return ci_build(repo=str(make_repo(files, name=name)), stage="B1").status


def test_a_test_cannot_reach_the_hosts_loopback(make_repo: RepoFactory) -> None:
    listener = Listener()
    body = (
        "import socket\n\n\ndef test_reach() -> None:\n"
        "    with socket.socket() as s:\n        s.settimeout(2)\n"
        f"        s.connect_ex(('127.0.0.1', {listener.port}))\n"
    )
    assert _build(make_repo, "reach", body) is BuildStatus.PASSED
    assert listener.connections == 0
    listener.sock.close()


@pytest.mark.parametrize("directory", ["/tmp", "/dev/shm", "/var/tmp"])  # dvc writes /var/tmp/dvc
def test_nothing_a_test_writes_to_a_shared_temp_dir_outlives_it(make_repo: RepoFactory, directory: str) -> None:
    marker = Path(directory) / f"mendflow-leak-{uuid.uuid4().hex}"
    body = f"from pathlib import Path\n\n\ndef test_leak() -> None:\n    Path({str(marker)!r}).write_text('x')\n"
    assert _build(make_repo, "leak", body) is BuildStatus.PASSED
    assert not marker.exists()


def test_a_repo_cannot_change_the_packages_another_repo_installs(make_repo: RepoFactory) -> None:
    # the venv's copy (a hard link into the shared cache, before) and the cache's own files
    tamper = (
        "import os\nfrom pathlib import Path\n\nimport iniconfig\n\n\ndef test_tamper() -> None:\n"
        "    cache = Path(os.environ.get('UV_CACHE_DIR', '/nonexistent'))\n"
        "    for path in [Path(iniconfig.__file__), *cache.rglob('iniconfig/__init__.py')]:\n"
        "        try:\n            path.open('a').write('\\nPOISONED = True\\n')\n"
        "        except OSError:\n            pass\n"
    )
    check = "import iniconfig\n\n\ndef test_clean() -> None:\n    assert not hasattr(iniconfig, 'POISONED')\n"
    assert _build(make_repo, "attacker", tamper) is BuildStatus.PASSED
    assert _build(make_repo, "victim", check) is BuildStatus.PASSED


SETUPTOOLS = PYPROJECT + '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
# Install-time code: the project's setup.py runs while its dependencies are installed (with the network), and
# poisons every iniconfig in the victim's dependency cache (its place is guessable from the victim's identity).
POISONING_SETUP = """\
import os
from pathlib import Path

from setuptools import setup

victim = Path(os.environ.get("UV_CACHE_DIR", "/nonexistent")).parent / {key!r}
for path in victim.rglob("iniconfig/__init__.py"):
    try:
        with path.open("a") as fh:
            fh.write("\\nPOISONED = True\\n")
    except OSError:
        pass
setup(packages=["probe"])
"""


def test_install_time_code_cannot_change_another_repos_dependency_cache(make_repo: RepoFactory) -> None:
    check = "import iniconfig\n\n\ndef test_clean() -> None:\n    assert not hasattr(iniconfig, 'POISONED')\n"
    run = uuid.uuid4().hex[:8]  # identities of their own: a cache an earlier run left cannot decide the outcome
    victim = make_repo({"pyproject.toml": PYPROJECT, "probe/__init__.py": "", "tests/test_probe.py": check}, f"v-{run}")
    assert ci_build(repo=str(victim), stage="B1").status is BuildStatus.PASSED  # its cache now holds iniconfig
    key = cache_key(repo_id(pygit2.Repository(str(victim))))
    attacker = {"pyproject.toml": SETUPTOOLS, "setup.py": POISONING_SETUP.format(key=key), "probe/__init__.py": ""}
    attacker_repo = make_repo({**attacker, "tests/test_probe.py": "def test_ok() -> None:\n    pass\n"}, f"a-{run}")
    assert ci_build(repo=str(attacker_repo), stage="B1").status is BuildStatus.PASSED
    commit_files(victim, {"README.md": "a new commit: a build of its own, from the cache\n"}, "again")
    assert ci_build(repo=str(victim), stage="B1").status is BuildStatus.PASSED


def test_a_mypy_plugin_in_the_repos_config_runs_offline(make_repo: RepoFactory) -> None:
    # mypy imports the plugins a repo's config names: the lint phase runs the repo's code too
    listener = Listener()
    marker = Path("/tmp") / f"mendflow-lint-{uuid.uuid4().hex}"
    plugin = (
        "import socket\nfrom pathlib import Path\n\nfrom mypy.plugin import Plugin\n\n"
        f"Path({str(marker)!r}).write_text('x')\n"
        "with socket.socket() as s:\n    s.settimeout(2)\n"
        f"    s.connect_ex(('127.0.0.1', {listener.port}))\n\n\n"
        "def plugin(version: str) -> type[Plugin]:\n    return Plugin\n"
    )
    pyproject = PYPROJECT.replace('"iniconfig==2.0.0"', '"iniconfig==2.0.0", "mypy==2.4.1"')
    files = {
        "pyproject.toml": pyproject + '\n[tool.mypy]\nfiles = ["probe"]\nplugins = ["probe_plugin.py"]\n',
        "probe_plugin.py": plugin, "probe/__init__.py": "", "tests/test_probe.py": "def test_ok() -> None:\n    pass\n",
    }  # fmt: skip
    report = ci_build(repo=str(make_repo(files, name="lintprobe")), stage="B1")

    assert report.status is BuildStatus.PASSED, report.lint_errors
    assert listener.connections == 0 and not marker.exists()
    listener.sock.close()


def test_a_test_cannot_use_the_dependency_phases_way_out(make_repo: RepoFactory) -> None:
    # the egress proxy's Unix socket would cross the tests' network namespace: the tests phase must not see it
    body = (
        "import os\nimport socket\n\n\ndef test_tunnel() -> None:\n"
        "    path = os.environ['MENDFLOW_EGRESS_SOCKET']\n"
        "    with socket.socket(socket.AF_UNIX) as s:\n"
        "        assert s.connect_ex(path) != 0, 'the egress proxy is reachable from the tests'\n"
    )
    assert _build(make_repo, "tunnel", body) is BuildStatus.PASSED


def test_a_test_cannot_swap_the_runner_code_that_sandboxes_the_next_step(make_repo: RepoFactory) -> None:
    # the runner runs outside the sandbox, as the job's uid: code it imports later must not be the repo's
    body = (
        "import os\nfrom pathlib import Path\n\n\ndef test_swap() -> None:\n"
        "    entries = [Path(p) for p in os.environ['PYTHONPATH'].split(os.pathsep) if p]\n"
        "    (runner,) = [p for p in entries if (p / 'mendflow_runner').is_dir()]\n"
        "    try:\n        runner.rename(runner.with_name('swapped'))\n"
        "    except OSError:\n        return\n"
        "    raise AssertionError('the runner package was swapped')\n"
    )
    assert _build(make_repo, "swap", body) is BuildStatus.PASSED


# Install-time code that tries the host's loopback: the build backend runs in the dependency phase, whose only way
# out is the launcher's egress proxy.
PROBING_SETUP = """\
import socket

from setuptools import setup

with socket.socket() as s:
    s.settimeout(2)
    s.connect_ex(("127.0.0.1", {port}))
setup(packages=["probe"])
"""


def test_install_time_code_reaches_the_package_index_and_nothing_else(make_repo: RepoFactory) -> None:
    listener = Listener()
    files = {
        "pyproject.toml": SETUPTOOLS, "setup.py": PROBING_SETUP.format(port=listener.port), "probe/__init__.py": "",
        "tests/test_probe.py": "import iniconfig\n\n\ndef test_ok() -> None:\n    assert iniconfig\n",
    }  # fmt: skip
    status = ci_build(repo=str(make_repo(files, name="installprobe")), stage="B1").status
    listener.sock.close()
    assert (status, listener.connections) == (BuildStatus.PASSED, 0)  # iniconfig and setuptools came from PyPI


def test_an_index_off_the_allowlist_fails_at_once_and_names_the_host(make_repo: RepoFactory) -> None:
    requirements = "--index-url https://mendflow-unlisted.example/simple/\niniconfig==2.0.0\n"
    files = {"requirements.txt": requirements, "tests/test_probe.py": "def test_ok() -> None:\n    pass\n"}
    report = ci_build(repo=str(make_repo(files, name="unlisted")), stage="B1")

    assert (report.status, report.fail_reason, report.transient, report.attempt) == (
        BuildStatus.ERRORED, FailReason.DEPENDENCIES, False, 1,
    )  # fmt: skip
    assert "mendflow-unlisted.example:443" in (report.error_reason or "")
    assert 'replaces the default ["pypi.org", "files.pythonhosted.org"]: keep those in it for Python jobs' in (
        report.error_reason or ""
    )
