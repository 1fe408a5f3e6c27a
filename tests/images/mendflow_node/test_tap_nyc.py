"""Whether node-tap measures every suite of the test script with its own nyc (then V8 need not write its data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mendflow_node import tap_nyc
from mendflow_node.project import Project


def _project(root: Path, scripts: dict[str, str], tap: str = "16.3.10", **files: str) -> Project:
    """A package whose installed tap is at version ``tap``, with nyc's command beside it, as tap 13-17 bring."""
    tree = {
        "package.json": json.dumps({"scripts": scripts, "devDependencies": {"tap": f"^{tap}"}}),
        "node_modules/tap/package.json": json.dumps({"name": "tap", "version": tap}),
        "node_modules/.bin/nyc": "",
        **files,
    }
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Project.read(root)


def test_tap_16_measures_a_script_whose_only_suite_it_runs(tmp_path: Path) -> None:
    # pino-abstract-transport 2.0.0
    assert tap_nyc.measures_every_suite(_project(tmp_path, {"test": "standard | snazzy && tap test/*.js && tsd"}))


def test_tap_run_through_another_script_and_npx_still_measures(tmp_path: Path) -> None:
    scripts = {"test": "npm run lint && npm run unit", "unit": "npx tap -J test/", "lint": "standard"}
    assert tap_nyc.measures_every_suite(_project(tmp_path, scripts))


@pytest.mark.parametrize("version", ["12.7.0", "18.8.0"])
def test_a_tap_that_measures_otherwise_or_only_when_asked_does_not(tmp_path: Path, version: str) -> None:
    assert not tap_nyc.measures_every_suite(_project(tmp_path, {"test": "tap test/*.js"}, tap=version))


def test_a_script_with_a_suite_tap_does_not_run_is_not_measured_by_it_alone(tmp_path: Path) -> None:
    assert not tap_nyc.measures_every_suite(_project(tmp_path, {"test": "tap test/*.js && node --test"}))


def test_a_suite_npm_test_runs_in_a_hook_counts_too(tmp_path: Path) -> None:
    scripts = {"test": "tap test/*.js", "posttest": "mocha test/extra"}
    assert not tap_nyc.measures_every_suite(_project(tmp_path, scripts))


@pytest.mark.parametrize("flag", ["--no-coverage", "--no-cov"])
def test_coverage_turned_off_on_taps_command_line_is_not_measured(tmp_path: Path, flag: str) -> None:
    assert not tap_nyc.measures_every_suite(_project(tmp_path, {"test": f"tap {flag} test/*.js"}))


@pytest.mark.parametrize("taprc", ["coverage: false\n", "jobs: 2\ncov: false\n", '{"no-coverage": true}'])
def test_coverage_turned_off_in_taprc_is_not_measured(tmp_path: Path, taprc: str) -> None:
    assert not tap_nyc.measures_every_suite(_project(tmp_path, {"test": "tap"}, **{".taprc": taprc}))


def test_a_taprc_that_only_drops_the_coverage_gate_still_measures(tmp_path: Path) -> None:
    assert tap_nyc.measures_every_suite(_project(tmp_path, {"test": "tap"}, **{".taprc": "check-coverage: false\n"}))


def test_coverage_turned_off_in_package_json_is_not_measured(tmp_path: Path) -> None:
    project = _project(tmp_path, {"test": "tap"})
    project.manifest["tap"] = {"coverage": False}
    assert not tap_nyc.measures_every_suite(project)


def test_without_nycs_command_tap_is_not_counted_on(tmp_path: Path) -> None:
    project = _project(tmp_path, {"test": "tap"})
    (tmp_path / "node_modules/.bin/nyc").unlink()
    assert not tap_nyc.measures_every_suite(project)


def test_a_script_that_cannot_be_read_is_not_counted_on(tmp_path: Path) -> None:
    assert not tap_nyc.measures_every_suite(_project(tmp_path, {"test": "tap 'test/*.js"}))
