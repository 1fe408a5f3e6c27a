"""What splitting a job at its dependency phase costs (the Kubernetes launcher with an egress proxy: a dependency
pod, then an offline pod): the CI runner on real libraries' sdists as one process, and as the two pods'
processes, side by side, alternating, with a warm dependency cache for both. The offline process has nothing but
the archive, an empty cache and no network (a network namespace of its own). Store transfers are not counted: the
archive's size says what they move. Run by hand; prints a Markdown table.

    uv run --frozen python bench/split_bench.py [--libraries humanize,pluggy,tomlkit] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_repos import LIBRARIES, as_shipped  # a sibling script, not a package

TOOLS = Path(sysconfig.get_path("scripts"))  # uv and ruff, as the image has them on PATH


def _runner(source: Path, pod: Path, cache: Path, phase: str = "", offline: bool = False) -> float:
    """Seconds the runner takes in ``pod`` (its workspace); ``phase`` splits it (``mendflow_runner.handoff``)."""
    env = {
        "PATH": f"{TOOLS}:/usr/bin:/bin",
        "HOME": str(pod / "home"),
        "UV_CACHE_DIR": str(cache),
        "SSL_CERT_FILE": os.environ.get("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
        "MENDFLOW_JOB_TIMEOUT_SEC": "1200",
        "MENDFLOW_PHASE": phase,
        "MENDFLOW_HANDOFF": str(pod.parent / "env.tar.gz"),
    }
    argv = [sys.executable, "-m", "mendflow_runner", "--source", str(source), "--out", str(pod / "out")]
    start = time.perf_counter()
    subprocess.run([*(["unshare", "--net", "--"] if offline else []), *argv], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _report(pod: Path) -> dict[str, Any]:
    return dict(json.loads((pod / "out" / "report.json").read_text()))


def _installed_sec(archive: Path) -> float:
    with tarfile.open(archive) as tar:
        meta = tar.extractfile("handoff.json")
        return float(json.load(meta)["installed_sec"]) if meta else 0.0


def measure(source: Path, work: Path, cache: Path) -> dict[str, float | str]:
    shutil.rmtree(work, ignore_errors=True)
    whole = _runner(source, work / "whole", cache)
    status = _report(work / "whole")["status"]
    first = _runner(source, work / "split" / "pod-1", cache, "dependencies")
    archive = work / "split" / "env.tar.gz"
    second = _runner(source, work / "split" / "pod-2", work / "split" / "empty-cache", "offline", offline=True)
    restored = _report(work / "split" / "pod-2")
    installed = _installed_sec(archive)
    return {
        "status": f"{status}/{restored['status']}",
        "whole": whole,
        "first": first,
        "second": second,
        "archive_mb": archive.stat().st_size / 1e6,
        "restore": restored["durations"]["dependencies"] - installed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--libraries", default="humanize,pluggy,tomlkit")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="mendflow-split-"))
    print("| library | status whole/split | whole s | dependency pod s | offline pod s | split ÷ whole | archive MB |"
          " restore s |\n|---|---|---|---|---|---|---|---|")  # fmt: skip
    for name in args.libraries.split(","):
        repo = as_shipped(name, LIBRARIES[name], base)
        source = base / f"{name}.tar.gz"
        subprocess.run(["git", "archive", "--format=tar.gz", "-o", str(source), "HEAD"], cwd=repo, check=True)
        cache = base / "cache" / name
        measure(source, base / "warm-up", cache)  # fills the cache, as a repository's earlier jobs would
        runs = [measure(source, base / "work", cache) for _ in range(args.repeat)]
        med = {
            k: statistics.median(float(r[k]) for r in runs)
            for k in ("whole", "first", "second", "archive_mb", "restore")
        }
        split = med["first"] + med["second"]
        cells = [runs[-1]["status"], *(f"{med[k]:.2f}" for k in ("whole", "first", "second"))]
        cells += [f"{split / med['whole']:.2f}", f"{med['archive_mb']:.1f}", f"{med['restore']:.2f}"]
        print(f"| {name} | {' | '.join(cells)} |", flush=True)
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
