"""The caches an image builds ahead of its jobs, made once per toolchain by the local launcher (a real
``python -m MODULE TARGET`` per seed; the Go seed itself is built in tests/images/mendflow_go)."""

from __future__ import annotations

import shutil
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from mendflow.jobcode import IMAGE_PACKAGES
from mendflow.launcher import seeds
from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings

BUILDER = textwrap.dedent(
    """\
    import pathlib, sys
    target = pathlib.Path(sys.argv[1])
    with (target.parent / "builds").open("a") as runs:
        runs.write("built\\n")
    if "{fail}":
        sys.exit("{fail}")
    target.mkdir()
    (target / ".complete").touch()
    """
)


def _image(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str = "") -> tuple[Path, Path]:
    runner, toolchains = tmp_path / "runner", tmp_path / "toolchain"
    runner.mkdir()
    toolchains.mkdir()
    (runner / "seed_builder.py").write_text(BUILDER.format(fail=fail))
    monkeypatch.setitem(seeds.IMAGE_SEEDS, "ci-runner-test", ("seed_builder", "TEST_SEED"))
    return runner, toolchains


def _seed_env(runner: Path, toolchains: Path) -> dict[str, str]:
    return seeds.seed_env("ci-runner-test", toolchains, [], Path(sys.executable), runner)


def test_a_seed_is_built_once_and_named_to_every_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner, toolchains = _image(tmp_path, monkeypatch)
    first, second = _seed_env(runner, toolchains), _seed_env(runner, toolchains)
    assert first == second and (Path(first["TEST_SEED"]) / ".complete").is_file()
    assert (toolchains / "builds").read_text() == "built\n"


def test_a_seed_that_fails_is_remembered_and_its_jobs_go_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner, toolchains = _image(tmp_path, monkeypatch, fail="no toolchain here")
    assert _seed_env(runner, toolchains) == {} and _seed_env(runner, toolchains) == {}
    assert (toolchains / "builds").read_text() == "built\n"
    [failed] = toolchains.glob("*.failed")
    assert failed.read_text() == "no toolchain here\n"


def test_a_changed_builder_builds_a_new_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner, toolchains = _image(tmp_path, monkeypatch)
    before = _seed_env(runner, toolchains)
    (runner / "seed_builder.py").write_text(BUILDER.format(fail="") + "# changed\n")
    assert _seed_env(runner, toolchains) != before


def test_an_image_without_a_seed_gets_no_variable(tmp_path: Path) -> None:
    assert seeds.seed_env("ci-runner-python", tmp_path, [], Path(sys.executable), tmp_path) == {}


def test_the_local_launcher_prepares_an_images_seed_ahead_of_its_jobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "packages" / "seed_image"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "builder.py").write_text(BUILDER.format(fail=""))
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.setitem(IMAGE_PACKAGES, "ci-runner-test", ("seed_image",))
    monkeypatch.setitem(seeds.IMAGE_SEEDS, "ci-runner-test", ("seed_image.builder", "TEST_SEED"))
    base = Path(f"/var/tmp/mendflow-seed-{uuid.uuid4().hex[:8]}")  # its own base, which dropped jobs can reach
    launcher = LocalLauncher(Settings(cache_dir=tmp_path / "c", sandbox={"local_base_dir": base}))
    try:
        seed = Path(launcher.prepare_image("ci-runner-test")["TEST_SEED"])
        assert seed.parent == base / "toolchain" and (seed / ".complete").is_file()
    finally:
        shutil.rmtree(base)
