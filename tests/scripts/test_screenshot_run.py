"""scripts/screenshot_run.py against a real server and real headless Chromium: the run page shows its artifacts."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from prefect import flow
from prefect.artifacts import create_markdown_artifact

from tests.fixtures.prefect import PrefectServer

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import screenshot_run  # noqa: E402

pytestmark = pytest.mark.slow
KEY = "screenshot-probe"


@flow(name="screenshot-probe")
def probe() -> None:
    create_markdown_artifact(markdown="# probe", key=KEY, description="Probe artifact")


@pytest.fixture(scope="module")
def finished_run(prefect_server: PrefectServer) -> str:
    state = probe(return_state=True)
    return str(state.state_details.flow_run_id)


def test_the_script_writes_a_png_of_the_run_page(finished_run: str, tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    assert screenshot_run.main(["--flow-run-id", finished_run, "--out", str(out), "--width", "900"]) == 0
    header = out.read_bytes()[:24]
    assert header.startswith(screenshot_run.PNG_MAGIC)
    assert struct.unpack(">II", header[16:24]) == (900, 1000)  # IHDR width, height


def test_the_page_it_captures_has_rendered_the_artifacts(finished_run: str, tmp_path: Path) -> None:
    """The same page and flags, DOM dumped instead of pixels: the artifact's key is on it, not an error toast."""
    url = f"{screenshot_run.ui_base()}/runs/flow-run/{finished_run}?tab=Artifacts"
    cmd = [screenshot_run.find_chromium(), *screenshot_run.CHROMIUM_FLAGS, f"--user-data-dir={tmp_path}"]
    cmd.append("--virtual-time-budget=20000")
    dom = subprocess.run([*cmd, "--dump-dom", url], capture_output=True, text=True, timeout=180, check=True).stdout
    assert KEY in dom


def test_a_run_without_artifacts_is_refused_in_one_line(prefect_server: PrefectServer, capsys) -> None:
    @flow(name="no-artifacts")
    def bare() -> None:
        return None

    run_id = str(bare(return_state=True).state_details.flow_run_id)
    assert screenshot_run.main(["--flow-run-id", run_id, "--out", "/nonexistent/x.png"]) == 1
    assert "has no artifacts" in capsys.readouterr().err
