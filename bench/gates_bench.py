"""Benchmark: a test builder's gates, N runs of the new tests in one job against one job per run.

The polyglot test builder keeps a generated test only when it passes ``FLAKE_RUNS`` runs (five). For each
language's shipped example, one run measures side by side, warm (the repository's dependency cache and, for Go,
the standard library seed in place, as after its B1): the gates as they run now, one build job with ``--select``
of one existing test and ``--runs 5`` (``tasks.ci.run_build_job(..., runs=5)``), and as they ran before, five
such jobs with one run each. The ratio is one job ÷ five jobs (lower is better).

    uv run python bench/gates_bench.py [--repeat 3] [--language go|typescript|rust|java ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from languages import go_files, subject_repo  # noqa: E402

from mendflow.testgen.polyglot import FLAKE_RUNS  # noqa: E402

# (language, example, one existing test's --select id in its runner's format)
EXAMPLES = [
    ("go", "go-ratelimit", ".::TestParseLimitBurst"),
    ("typescript", "ts-invoice", "tests/money.test.ts"),
    ("rust", "rust-duration", "tests/roundtrip.rs::parsing_what_was_formatted_gives_it_back"),
    ("java", "java-isbn", "src/test/java/org/example/isbn/IsbnTest.java::parsesHyphenatedIsbn13"),
]


def gates(repo: Path, select: str, runs: int, jobs: int) -> tuple[float, list[str]]:
    """Wall seconds of ``jobs`` build jobs of ``select``, ``runs`` runs each, and their statuses."""
    from mendflow import source as sources
    from mendflow.settings import get_settings
    from mendflow.store import open_store
    from tasks.ci import run_build_job

    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    source = sources.resolve(str(repo), None, "main", store, settings)
    store.delete_prefix(source.artefacts.builds(source.commit_sha, "TG0"))  # every measurement builds again
    statuses = []
    start = time.perf_counter()
    for attempt in range(1, jobs + 1):
        report = run_build_job(source, "TG0", attempt, store, settings, select=[select], runs=runs)
        statuses.append(f"{report.status.value} runs={report.runs}")
    return time.perf_counter() - start, statuses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--language", action="append", choices=[e[0] for e in EXAMPLES])
    args = parser.parse_args(argv)
    chosen = args.language or [e[0] for e in EXAMPLES]
    print(f"| language | example | one job, {FLAKE_RUNS} runs (s) | {FLAKE_RUNS} jobs, a run each (s) | ratio |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="mendflow-gates-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # jobs drop to their own uids: the launcher's base must be reachable
        os.environ["MENDFLOW_STATE_DIR"] = str(work / "state")
        os.environ["MENDFLOW_SANDBOX__LOCAL_BASE_DIR"] = str(work / "launcher")
        if "go" in chosen:
            from mendflow.launcher.local import LocalLauncher
            from mendflow.settings import get_settings

            LocalLauncher(get_settings()).prepare_image("ci-runner-go")
        for language, example, select in EXAMPLES:
            if language not in chosen:
                continue
            repo = subject_repo(example, None, example, go_files, work)  # the example: nothing is fetched
            gates(repo, select, 1, 1)  # warms the repository's dependency cache, as its B1 would
            one, many = [], []
            for _ in range(args.repeat):  # interleaved, so drift on the machine falls on both alike
                wall, said_one = gates(repo, select, FLAKE_RUNS, 1)
                one.append(wall)
                wall, said_many = gates(repo, select, 1, FLAKE_RUNS)
                many.append(wall)
            if said_one != [f"PASSED runs={FLAKE_RUNS}"] or set(said_many) != {"PASSED runs=1"}:
                print(f"{example}: the gates did not pass: {said_one} {said_many}", file=sys.stderr)
            a, b = statistics.median(one), statistics.median(many)
            print(f"| {language} | {example} | {a:.2f} | {b:.2f} | {a / b:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
