"""`mendflow grep` against ripgrep on an indexed repository (run by hand; prints a table). Not a test.

    uv run --frozen mendflow index /tmp/mendflow-bench/sympy-1.14.0
    uv run --frozen python bench/grep_bench.py --repo /tmp/mendflow-bench/sympy-1.14.0 [--repeat 7]

For each pattern (literal, regex, ignore-case) it checks that `mendflow grep` prints the same lines as
`rg -n --no-heading` run in the repository's root (as sorted sets: rg's file order is not fixed), then times
best-of and median: ``CodeIndex.grep_lines`` in this process (index open, caches warm, as the store is in a
long-lived caller), the `mendflow grep` command end to end (a fresh interpreter each time) and `rg`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rag_indexer.api import open_index
from rag_indexer.config import IndexerConfig

PATTERNS = (
    ("ZeroDivisionError", False, False),
    (r"def _eval_\w+\(self\)", True, False),
    ("zerodivisionerror", False, True),
)


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    seconds = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - t)
    return min(seconds) * 1000, statistics.median(seconds) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="an indexed git work tree")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    repo = args.repo.resolve()
    state = os.environ.get("MENDFLOW_STATE_DIR", str(Path.home() / ".local/state/mendflow"))
    mendflow = [sys.executable, "-m", "mendflow.cli", "grep"]
    print(
        f"{'pattern':<28} {'same':>5} {'lines':>6} {'in-process ms':>15} {'CLI ms':>13} {'rg ms':>11}  (best / median)"
    )
    with open_index(config=IndexerConfig(index_dir=Path(state) / "index")) as index:
        scope = {"repo": str(repo), "ref": "HEAD"}
        for pattern, regex, icase in PATTERNS:
            flags = (["--regex"] if regex else []) + (["-i"] if icase else [])
            rg = ["rg", "-n", "--no-heading", *(["-i"] if icase else []), *([] if regex else ["-F"]), pattern]
            ours = subprocess.run([*mendflow, *flags, pattern], cwd=repo, capture_output=True, text=True).stdout
            theirs = subprocess.run(rg, cwd=repo, capture_output=True, text=True).stdout
            same = sorted(ours.splitlines()) == sorted(theirs.splitlines())

            def in_process(p: str = pattern, r: bool = regex, i: bool = icase) -> object:
                return list(index.grep_lines(p, r, i, scope))

            inner = timed(in_process, args.repeat)
            cli = timed(
                lambda f=flags, p=pattern: subprocess.run([*mendflow, *f, p], cwd=repo, capture_output=True),
                args.repeat,
            )
            rg_t = timed(lambda c=rg: subprocess.run(c, cwd=repo, capture_output=True), args.repeat)
            label = pattern + (" -i" if icase else "")
            print(
                f"{label:<28} {'yes' if same else 'NO':>5} {len(theirs.splitlines()):>6} "
                f"{inner[0]:>7.1f} / {inner[1]:<5.1f} {cli[0]:>5.0f} / {cli[1]:<5.0f} {rg_t[0]:>4.0f} / {rg_t[1]:<4.0f}"
            )


if __name__ == "__main__":
    main()
