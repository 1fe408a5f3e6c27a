"""Benchmark: ``mendflow build`` end to end on a temporary Prefect server, against the same build on a running one.

Subject: the shipped example (examples/calc, a git copy). Three ways, interleaved in one run, each a fresh process:

- ``server``: the CLI with ``PREFECT_API_URL`` naming a Prefect server started here once (a team's server): the floor;
- ``mendflow temporary``: the CLI with no Prefect API configured: it starts the temporary server itself, before it
  imports Prefect;
- ``Prefect temporary``: ``ci_build`` called from Python with no Prefect API configured: Prefect's client starts its
  own temporary server when the flow first needs one (what the CLI did before).

    uv run python bench/cli_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.prefect import start_server, stop  # noqa: E402
from tests.fixtures.repos import commit_files  # noqa: E402

PREFECT_LAZY = "import sys; from flows.ci import ci_build; sys.exit(ci_build(repo=sys.argv[1]).status != 'PASSED')"


def subject(work: Path) -> Path:
    import pygit2

    repo = work / "calc"
    shutil.copytree(ROOT / "examples" / "calc", repo)
    pygit2.init_repository(str(repo), initial_head="main")
    commit_files(repo, {}, "calc")  # the copied tree as it is
    return repo


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{argv[:4]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mendflow-cli-bench-", dir="/var/tmp"))
    work.chmod(0o711)  # sandboxed jobs run as an unprivileged uid and must reach their workspaces below it
    repo = subject(work)
    base = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API")}
    base.update(MENDFLOW_STATE_DIR=str(work / "state"), MENDFLOW_SANDBOX__LOCAL_BASE_DIR=str(work / "launcher"))
    temporary = {**base, "PREFECT_HOME": str(work / "prefect-temporary")}
    (work / "prefect-server").mkdir()
    proc, server_env = start_server(work / "prefect-server")
    cli = [sys.executable, "-m", "mendflow.cli", "build", str(repo), "--json"]
    ways = {
        "server": (cli, {**base, **server_env}),
        "mendflow temporary": (cli, temporary),
        "Prefect temporary": ([sys.executable, "-c", PREFECT_LAZY, str(repo)], temporary),
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    try:
        for argv, env in ways.values():  # warm-up: the databases' migrations, the job's caches
            timed(argv, env)
        for _ in range(args.repeat):
            for name, (argv, env) in ways.items():
                times[name].append(timed(argv, env))
    finally:
        stop(proc)
        shutil.rmtree(work, ignore_errors=True)
    floor = statistics.median(times["server"])
    print(f"\n{'way':20} {'best':>7} {'median':>7} {'÷ server':>9}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:20} {min(values):6.2f}s {median:6.2f}s {median / floor:9.2f}")


if __name__ == "__main__":
    main()
