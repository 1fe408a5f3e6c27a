"""The Node.js a package asks for, judged against the real node and npm's own semver."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mendflow_node import engines

NODE = subprocess.run(["node", "-v"], capture_output=True, text=True, check=True).stdout.strip().lstrip("v")
MAJOR = NODE.split(".")[0]


@pytest.mark.parametrize("wanted", [">=18", f"^{MAJOR}", f"{MAJOR}.x || >=99", "*", f">= {MAJOR}.0.0"])
def test_a_range_the_image_satisfies_says_nothing(tmp_path: Path, wanted: str) -> None:
    assert engines.unmet(tmp_path, {"engines": {"node": wanted}}, dict(os.environ)) == []


@pytest.mark.parametrize("wanted", [">=99", f"<{MAJOR}", "^18.19 || >=99.1"])
def test_a_range_the_image_does_not_satisfy_is_said(tmp_path: Path, wanted: str) -> None:
    said = f"package.json:0:0 engines.node {wanted} excludes Node {NODE}, which built and tested it"
    assert engines.unmet(tmp_path, {"engines": {"node": wanted}}, dict(os.environ)) == [said]


@pytest.mark.parametrize("text", [MAJOR, f"v{MAJOR}", NODE, "lts/*", "node", "lts/iron"])
def test_a_pin_of_the_images_release_or_an_alias_says_nothing(tmp_path: Path, text: str) -> None:
    (tmp_path / ".nvmrc").write_text(f"{text}\n")
    assert engines.unmet(tmp_path, {}, dict(os.environ)) == []


def test_a_node_version_pin_of_another_release_is_said(tmp_path: Path) -> None:
    other = f"{int(MAJOR) + 1}.1.0"
    (tmp_path / ".node-version").write_text(f"{other}\n")
    said = f".node-version:0:0 Node {other} is pinned: built and tested with Node {NODE} (none is downloaded)"
    assert engines.unmet(tmp_path, {}, dict(os.environ)) == [said]


def test_a_request_nothing_can_judge_says_nothing(tmp_path: Path) -> None:
    assert engines.unmet(tmp_path, {"engines": {"node": ">=99"}}, {"PATH": str(tmp_path)}) == []
