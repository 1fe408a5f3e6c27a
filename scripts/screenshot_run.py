#!/usr/bin/env python3
"""Screenshot a finished flow run's page in the Prefect UI with headless Chromium (no driver needed).

    PREFECT_API_URL=http://127.0.0.1:4200/api uv run python scripts/screenshot_run.py --out docs/ui-run.png
    ... --flow-run-id 5f0c...          # a given run instead of the newest completed one with artifacts
    ... --tab Artifacts                # which tab of the run page to open (default Artifacts)

Chromium: Debian package `chromium` (`apt-get install -y chromium`). It runs with a fresh profile in a
temporary directory and --virtual-time-budget, so the single-page app has rendered before the capture.
Exit status: 0 with the PNG written, 1 otherwise (a one-line reason on stderr).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from uuid import UUID

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import StateType
from prefect.client.schemas.sorting import FlowRunSort
from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class ScreenshotError(Exception):
    """Why no screenshot was taken."""


def has_artifacts(client: SyncPrefectClient, run_id: UUID) -> bool:
    return bool(client.read_artifacts(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])), limit=1))


def newest_completed_run_with_artifacts(client: SyncPrefectClient) -> UUID:
    completed = FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.COMPLETED])))
    for run in client.read_flow_runs(flow_run_filter=completed, sort=FlowRunSort.END_TIME_DESC, limit=50):
        if has_artifacts(client, run.id):
            return run.id
    raise ScreenshotError("no completed flow run with artifacts on this server; run ci_build first")


def ui_base() -> str:
    """The UI's base URL; the v2 UI when the server has it (its run page honours ?tab=, v1's does not)."""
    api = PREFECT_API_URL.value()
    if not api:
        raise ScreenshotError("PREFECT_API_URL is not set; point it at the server whose run to capture")
    root = str(PREFECT_UI_URL.value() or str(api).rstrip("/").removesuffix("/api")).rstrip("/")
    try:
        with urllib.request.urlopen(f"{root}/ui-settings", timeout=10) as response:
            ui_settings = json.load(response)
    except (OSError, ValueError) as exc:
        raise ScreenshotError(f"cannot read {root}/ui-settings: {exc}") from exc
    if ui_settings.get("api_url", "").rstrip("/") != str(api).rstrip("/"):
        # The page would load and then fail every API call: an error toast, not a run.
        raise ScreenshotError(
            f"the UI calls {ui_settings.get('api_url')}, not {api}; start the server with "
            f"PREFECT_SERVER_UI_API_URL={api}"
        )
    if "v2" in ui_settings.get("available_uis", []):
        return root + str(ui_settings.get("v2_base_url", "/v2")).rstrip("/")
    return root


def find_chromium() -> str:
    for name in CHROMIUM_NAMES:
        if path := shutil.which(name):
            return path
    raise ScreenshotError("no chromium on PATH; install it: apt-get install -y chromium")


def capture(url: str, out: Path, width: int, height: int, budget_ms: int) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mendflow-chromium-") as profile:
        partial = Path(profile) / "shot.png"  # written whole, then moved: no half-written PNG in docs/
        cmd = [
            find_chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            f"--virtual-time-budget={budget_ms}",
            f"--screenshot={partial}",
            url,
        ]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
        if not partial.exists() or not partial.read_bytes().startswith(PNG_MAGIC):
            raise ScreenshotError(f"chromium wrote no PNG (exit {result.returncode}): {result.stderr[-500:]}")
        shutil.move(partial, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/ui-run.png"))
    parser.add_argument("--flow-run-id", type=UUID)
    parser.add_argument("--tab", default="Artifacts", help="tab of the run page: Logs, Artifacts, ...")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--budget-ms", type=int, default=20000, help="virtual time for the SPA to render")
    args = parser.parse_args(argv)
    try:
        with get_client(sync_client=True) as client:
            run_id = args.flow_run_id or newest_completed_run_with_artifacts(client)
            if not has_artifacts(client, run_id):
                raise ScreenshotError(f"flow run {run_id} has no artifacts to show")
        url = f"{ui_base()}/runs/flow-run/{run_id}?tab={args.tab}"
        capture(url, args.out, args.width, args.height, args.budget_ms)
    except ScreenshotError as exc:
        print(f"screenshot_run: {exc}", file=sys.stderr)
        return 1
    print(f"{args.out} <- {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
