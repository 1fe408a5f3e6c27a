"""Benchmark: ``ci_build`` wall time vs plain ``pytest --cov``, cold and warm dependency cache.

Subjects: the shipped example (examples/calc) and more-itertools 10.8.0 (sdist from PyPI, ~1,000 tests).
Everything is measured side by side in one run; ratios are what matter, not absolute seconds.

    uv run python bench/build_bench.py [--repeat 2]

The flow talks to a Prefect server started here once (as a team's server would be); the one-off cost of
Prefect's temporary server (no PREFECT_API_URL) is measured separately.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.prefect import _wait_healthy, free_port  # noqa: E402
from tests.fixtures.repos import commit_files  # noqa: E402

SUBJECTS = {"calc": None, "more-itertools": "more-itertools==10.8.0"}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def make_subject(name: str, work: Path) -> tuple[Path, str]:
    """A git repo of the subject and the package name to measure coverage of."""
    import pygit2

    target = work / name
    if SUBJECTS[name] is None:
        shutil.copytree(ROOT / "examples" / "calc", target)
        package = "calc"
    else:
        dl = work / "sdist"
        base_python = str(Path(sys.base_prefix) / "bin" / "python3")  # the venv has no pip; its base does
        subprocess.run(
            [
                base_python,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                SUBJECTS[name],
                "-d",
                str(dl),
            ],
            check=True,
        )
        with tarfile.open(next(dl.glob("*.tar.gz"))) as tar:
            tar.extractall(dl, filter="data")
        shutil.move(next(p for p in dl.iterdir() if p.is_dir()), target)
        package = "more_itertools"
    pygit2.init_repository(str(target), initial_head="main")
    commit_files(target, {}, "bench import")
    return target, package


def plain_run(repo: Path, package: str, cache: Path) -> tuple[float, float]:
    """(install seconds, pytest --cov seconds) the way a developer would run them by hand."""
    venv = Path(tempfile.mkdtemp(prefix="bench-venv-"))
    env = {**os.environ, "UV_CACHE_DIR": str(cache), "VIRTUAL_ENV": str(venv)}
    env.pop("PREFECT_API_URL", None)
    py = str(venv / "bin" / "python")

    def install() -> None:
        subprocess.run(["uv", "venv", "-q", "--python", sys.executable, str(venv)], env=env, check=True)
        subprocess.run(
            ["uv", "pip", "install", "-q", "--python", py, "-e", str(repo), "pytest", "pytest-cov"], env=env, check=True
        )

    install_s = timed(install)
    test_s = timed(
        lambda: subprocess.run(
            [
                py,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--cov={package}",
                "--cov-branch",
                "--cov-report=json:/dev/null",
            ],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            check=False,
        )
    )
    shutil.rmtree(venv)
    return install_s, test_s


def mendflow_run(repo: Path, base: Path) -> tuple[float, float, str]:
    """(wall seconds of ci_build, its dependency step, status) with the local launcher rooted at ``base``."""
    os.environ["MENDFLOW_SANDBOX__LOCAL_BASE_DIR"] = str(base)
    from flows.ci import ci_build
    from mendflow.settings import get_settings

    get_settings.cache_clear()
    start = time.perf_counter()
    report = ci_build(repo=str(repo))
    wall = time.perf_counter() - start
    return wall, report.durations.get("dependencies", 0.0), report.status.value


def start_prefect(work: Path) -> subprocess.Popen[bytes]:
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(work / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    log = work / "prefect.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    _wait_healthy(api, proc, log)
    os.environ.update(
        {"PREFECT_API_URL": api, "PREFECT_HOME": str(work / "prefect"), "PREFECT_LOGGING_LEVEL": "WARNING"}
    )
    return proc


def ephemeral_overhead(repo: Path, base: Path) -> float:
    """Wall time of the CLI with no Prefect server configured (Prefect starts a temporary one)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_URL")}
    env["MENDFLOW_SANDBOX__LOCAL_BASE_DIR"] = str(base)
    return timed(
        lambda: subprocess.run(
            [sys.executable, "-m", "mendflow.cli.__main__", "build", str(repo), "--json"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mendflow-bench-", dir="/var/tmp"))
    work.chmod(0o711)  # sandboxed jobs run as an unprivileged uid and must reach their workspaces below it
    os.environ["MENDFLOW_STATE_DIR"] = str(work / "state")
    server = start_prefect(work)
    rows = []
    try:
        for name in SUBJECTS:
            repo, package = make_subject(name, work)
            cold_cache = work / f"plain-cold-{name}"
            plain_cold = plain_run(repo, package, cold_cache)
            plain_warm = [plain_run(repo, package, cold_cache) for _ in range(args.repeat)]
            base = work / f"launcher-{name}"
            mf_cold = mendflow_run(repo, base)
            mf_warm = [mendflow_run(repo, base) for _ in range(args.repeat)]
            warm_test = statistics.median(t for _, t in plain_warm)
            warm_total = statistics.median(i + t for i, t in plain_warm)
            warm_mf = statistics.median(w for w, _, _ in mf_warm)
            rows.append((name, plain_cold, plain_warm, mf_cold, mf_warm, warm_test, warm_total, warm_mf))
        overhead = ephemeral_overhead(repo, work / "launcher-more-itertools")
    finally:
        server.terminate()
    print(
        f"\n{'subject':16} {'pytest --cov':>13} {'install+pytest':>15} {'mendflow':>9} {'÷pytest':>8} "
        f"{'÷install+pytest':>16} {'deps cold':>10} {'deps warm':>10} {'plain inst cold/warm':>21} status"
    )
    for name, pc, pw, mc, mw, wt, wtot, wmf in rows:
        print(
            f"{name:16} {wt:12.2f}s {wtot:14.2f}s {wmf:8.2f}s {wmf / wt:8.2f} {wmf / wtot:16.2f} "
            f"{mc[1]:9.2f}s {statistics.median(d for _, d, _ in mw):9.2f}s "
            f"{pc[0]:9.2f}s/{statistics.median(i for i, _ in pw):.2f}s {mw[-1][2]}"
        )
        print(
            f"{'':16} cold: mendflow {mc[0]:.2f}s vs install+pytest {pc[0] + pc[1]:.2f}s "
            f"(ratio {mc[0] / (pc[0] + pc[1]):.2f})"
        )
    print(f"CLI with Prefect's temporary server (no PREFECT_API_URL), more-itertools warm: {overhead:.1f}s")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
