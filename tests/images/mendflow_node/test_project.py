"""What a Node project says of itself: the dependencies it names, its scripts' tools, its TypeScript sources."""

from __future__ import annotations

import json
from pathlib import Path

from mendflow_node.project import Project


def _project(root: Path, files: dict[str, str]) -> Project:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Project.read(root)


def test_a_typescript_another_package_brought_is_no_dependency_of_the_project(tmp_path: Path) -> None:
    """fast-uri: typescript in node_modules (and its tsc in .bin) only as a peer of @typescript-eslint."""
    manifest = {"devDependencies": {"neostandard": "0.12.2"}}
    tsc = "node_modules/typescript/package.json"
    project = _project(tmp_path, {"package.json": json.dumps(manifest), tsc: '{"name": "typescript"}'})
    assert project.has_package("typescript") and not project.depends_on("typescript")


def test_declaration_files_and_node_modules_are_no_typescript_sources(tmp_path: Path) -> None:
    files = {"package.json": "{}", "types/index.d.ts": "", "node_modules/x/index.ts": "", "lib/a.js": ""}
    assert not _project(tmp_path, files).has_typescript_sources
    assert _project(tmp_path, {"test/types/index.ts": ""}).has_typescript_sources


def test_type_tests_of_a_javascript_packages_declarations_are_no_typescript_sources(tmp_path: Path) -> None:
    """@pinojs/redact 0.4.0's index.test-d.ts (tsd), @fastify/sensible's types/index.tst.ts (tstyche)."""
    files = {"package.json": "{}", "index.test-d.ts": "", "types/index.tst.ts": "", "index.js": ""}
    assert not _project(tmp_path, files).has_typescript_sources


def test_a_script_runs_tsc_by_its_word_not_a_longer_name(tmp_path: Path) -> None:
    scripts = {"lint": "eslint . && tsc-alias -p tsconfig.json", "build": "tsd"}
    assert not _project(tmp_path, {"package.json": json.dumps({"scripts": scripts})}).script_runs("tsc")
    scripts["test"] = "tap && npx tsc -p test/types"
    assert _project(tmp_path, {"package.json": json.dumps({"scripts": scripts})}).script_runs("tsc")


def test_a_standard_style_linter_a_script_runs_is_the_projects_linter(tmp_path: Path) -> None:
    manifest = {"scripts": {"lint": "semistandard | snazzy"}, "devDependencies": {"semistandard": "17.0.0"}}
    assert _project(tmp_path, {"package.json": json.dumps(manifest)}).linter == "semistandard"


def test_an_eslint_configuration_makes_eslint_the_linter_beside_standard(tmp_path: Path) -> None:
    manifest = {"scripts": {"lint": "standard"}, "devDependencies": {"standard": "17.1.2"}}
    files = {"package.json": json.dumps(manifest), "eslint.config.js": "module.exports = []\n"}
    assert _project(tmp_path, files).linter == "eslint"


def test_xo_a_script_runs_is_the_projects_linter(tmp_path: Path) -> None:
    manifest = {"scripts": {"test": "xo && ava"}, "devDependencies": {"xo": "2.0.2", "ava": "6.4.1"}}
    assert _project(tmp_path, {"package.json": json.dumps(manifest)}).linter == "xo"
