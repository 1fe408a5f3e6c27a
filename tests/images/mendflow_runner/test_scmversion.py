"""The job's version handed to build backends that read it from git (``mendflow_runner.scmversion``)."""

from __future__ import annotations

from pathlib import Path

from mendflow_runner.scmversion import JOB_VERSION, OVERRIDES, overrides


def test_each_backend_gets_the_jobs_version(tmp_path: Path) -> None:
    assert overrides(tmp_path, {JOB_VERSION: "1.2.4.dev5+gabc1234"}) == dict.fromkeys(OVERRIDES, "1.2.4.dev5+gabc1234")


def test_an_sdist_keeps_the_version_its_pkg_info_says(tmp_path: Path) -> None:
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: p\nVersion: 3.5.0\n")
    assert overrides(tmp_path, {JOB_VERSION: "0.1.dev1+gabc1234"}) == {}


def test_an_override_the_environment_sets_is_kept(tmp_path: Path) -> None:
    env = {JOB_VERSION: "1.0", "SETUPTOOLS_SCM_PRETEND_VERSION": "9.9"}
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" not in overrides(tmp_path, env)


def test_without_a_version_nothing_is_set(tmp_path: Path) -> None:
    assert overrides(tmp_path, {}) == {}
