"""A job split at its dependency phase, as the Kubernetes launcher runs it: two processes, nothing shared but the
archive, and the second with no network at all (a fresh network namespace) and an empty dependency cache."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from mendflow_runner import handoff

from mendflow.contracts import BuildReport, BuildStatus, FailReason
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_runner.helpers import PYPROJECT, demo_files, runner_env, snapshot

pytestmark = pytest.mark.slow

NO_NETWORK = ["unshare", "--net", "--"]  # as root: only a loopback, down; the way an offline pod has nothing


def _phase(
    phase: str, source: Path, out: Path, archive: Path, cache: Path, prefix: list[str] | None = None
) -> tuple[int, str]:
    env = runner_env(cache, MENDFLOW_PHASE=phase, MENDFLOW_HANDOFF=str(archive))
    argv = [*(prefix or []), sys.executable, "-m", "mendflow_runner", "--source", str(source), "--out", str(out)]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _report(out: Path) -> BuildReport:
    return BuildReport.model_validate(json.loads((out / "report.json").read_text()))


def _split(make_repo: RepoFactory, tmp_path: Path, uv_cache: Path, **files: str | None) -> dict[str, Any]:
    source = snapshot(make_repo(demo_files(**files)), tmp_path / "src.tar.gz")
    pod, archive = tmp_path / "pod", tmp_path / "store" / "env.tar.gz"
    first = _phase("dependencies", source, pod / "out", archive, uv_cache)
    produced = sorted(p.name for p in (pod / "out").iterdir())
    shutil.rmtree(pod)  # the second pod shares nothing with the first but the archive
    return {"first": first, "produced": produced, "source": source, "pod": pod, "archive": archive}


def test_the_offline_pod_builds_with_no_network_and_no_cache(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    split = _split(make_repo, tmp_path, uv_cache)
    assert split["first"][0] == 0, split["first"][1]
    assert "report.json" not in split["produced"] and split["archive"].is_file()
    empty_cache = tmp_path / "empty-cache"
    rc, said = _phase("offline", split["source"], split["pod"] / "out", split["archive"], empty_cache, NO_NETWORK)
    report = _report(split["pod"] / "out")
    assert rc == 0, said
    assert (report.status, report.tests.passed, report.tests.total) == (BuildStatus.PASSED, 2, 2)
    assert report.coverage is not None and 0 < report.coverage.line_pct < 100
    assert not empty_cache.exists() or not any(empty_cache.iterdir())  # nothing was installed here


BUILD_HOOK = """\
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):
    def initialize(self, version, build_data):
        Path(self.root, "demo", "_generated.py").write_text("VALUE = 42\\n")
"""
USES_GENERATED = """\
import pytest

from demo._generated import VALUE


@pytest.mark.fast
def test_value() -> None:
    assert VALUE == 42
"""


def test_what_the_install_wrote_into_the_source_tree_reaches_the_offline_pod(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    """As hatch-vcs writes ``_version.py`` when the project is installed: the snapshot never has it."""
    files = {
        "pyproject.toml": PYPROJECT + "\n[tool.hatch.build.hooks.custom]\n",
        "hatch_build.py": BUILD_HOOK,
        "tests/test_generated.py": USES_GENERATED,
    }
    split = _split(make_repo, tmp_path, uv_cache, **files)
    assert split["first"][0] == 0, split["first"][1]
    _phase("offline", split["source"], split["pod"] / "out", split["archive"], tmp_path / "empty", NO_NETWORK)
    report = _report(split["pod"] / "out")
    assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 3), report.failed_tests


def test_a_failed_install_is_the_first_pods_report_and_no_archive(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    pyproject = PYPROJECT.replace("dependencies = []", 'dependencies = ["mendflow-no-such-package-4d1e"]')
    source = snapshot(make_repo(demo_files(**{"pyproject.toml": pyproject})), tmp_path / "src.tar.gz")
    out, archive = tmp_path / "pod" / "out", tmp_path / "store" / "env.tar.gz"
    rc, said = _phase("dependencies", source, out, archive, uv_cache)
    report = _report(out)
    assert rc == 0, said
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.DEPENDENCIES)
    assert not archive.exists()


def test_the_offline_pod_without_the_archive_errors_saying_so(
    make_repo: RepoFactory, tmp_path: Path, uv_cache: Path
) -> None:
    source = snapshot(make_repo(demo_files()), tmp_path / "src.tar.gz")
    out, archive = tmp_path / "pod" / "out", tmp_path / "store" / "env.tar.gz"
    _phase("offline", source, out, archive, uv_cache, NO_NETWORK)
    report = _report(out)
    assert (report.status, report.fail_reason) == (BuildStatus.ERRORED, FailReason.INFRASTRUCTURE)
    assert "archive is missing" in (report.error_reason or "")


def test_the_archive_restores_nothing_outside_its_environments(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("venv/ok.txt", "src/conftest.py", "../escape.txt"):
            data = tmp_path / "payload"
            data.write_text(name)
            tar.add(data, arcname=name)
    root = tmp_path / "work"
    monkeypatch.setenv(handoff.ARCHIVE_ENV, str(archive))
    handoff.restore(root, [root / "venv"])
    assert (root / "venv" / "ok.txt").is_file()
    assert not (root / "src").exists() and not (tmp_path / "escape.txt").exists()


def _archive_through_a_link(tmp_path: Path, outside: Path) -> Path:
    archive = tmp_path / "env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        link = tarfile.TarInfo("venv/lib")
        link.type, link.linkname = tarfile.SYMTYPE, str(outside)
        tar.addfile(link)
        payload = tmp_path / "payload"
        payload.write_text("planted")
        tar.add(payload, arcname="venv/lib/planted.txt")
    return archive


@pytest.mark.parametrize("tar_filter", [True, False], ids=["tarfile's filter", "python before 3.11.4"])
def test_the_archive_cannot_write_through_a_link_it_planted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tar_filter: bool
) -> None:
    if not tar_filter:  # Debian 12's Python 3.11.2, the offline-built image's, has no extraction filters
        monkeypatch.delattr(tarfile, "tar_filter")
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv(handoff.ARCHIVE_ENV, str(_archive_through_a_link(tmp_path, outside)))
    root = tmp_path / "work"
    with pytest.raises(handoff.HandoffError, match="cannot restore"):
        handoff.restore(root, [root / "venv"])
    assert not (outside / "planted.txt").exists()
