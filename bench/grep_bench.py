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
from functools import partial
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


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Output to a pipe (rg stops at its first match when it writes to /dev/null) and no stdin (rg searches a
    readable stdin instead of the directory)."""
    return subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)


def interleaved(
    first: Callable[[], object], second: Callable[[], object], repeat: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Best and median ms of each, run alternately: a change in the machine's load hits both alike."""
    first_ms: list[float] = []
    second_ms: list[float] = []
    for _ in range(repeat):
        for run, seconds in ((first, first_ms), (second, second_ms)):
            t = time.perf_counter()
            run()
            seconds.append((time.perf_counter() - t) * 1000)
    return (min(first_ms), statistics.median(first_ms)), (min(second_ms), statistics.median(second_ms))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True, help="an indexed git work tree")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--literal", help="a literal to find instead of SymPy's (with --regex-pattern and --icase)")
    ap.add_argument("--regex-pattern", help="a regular expression to find instead of SymPy's")
    ap.add_argument("--icase", help="a literal to find regardless of case instead of SymPy's")
    args = ap.parse_args()
    repo = args.repo.resolve()
    state = os.environ.get("MENDFLOW_STATE_DIR", str(Path.home() / ".local/state/mendflow"))
    mendflow = [str(Path(sys.executable).with_name("mendflow")), "grep"]  # the command as installed
    print(
        f"{'pattern':<28} {'same':>5} {'lines':>6} {'in-process ms':>15} {'CLI ms':>13} {'rg ms':>13} "
        f"{'CLI / rg':>13}  (best / median)"
    )
    with open_index(config=IndexerConfig(index_dir=Path(state) / "index")) as index:
        scope = {"repo": str(repo), "ref": "HEAD"}
        given = ((args.literal, False, False), (args.regex_pattern, True, False), (args.icase, False, True))
        patterns = [g for g in given if g[0]] or PATTERNS
        for pattern, regex, icase in patterns:
            flags = (["--regex"] if regex else []) + (["-i"] if icase else [])
            rg = ["rg", "-n", "--no-heading", *(["-i"] if icase else []), *([] if regex else ["-F"]), pattern]
            ours = run([*mendflow, *flags, pattern], repo).stdout.decode()
            theirs = run(rg, repo).stdout.decode()
            same = sorted(ours.splitlines()) == sorted(theirs.splitlines())

            def in_process(p: str = pattern, r: bool = regex, i: bool = icase) -> object:
                return list(index.grep_lines(p, r, i, scope))

            inner = timed(in_process, args.repeat)
            ours_run, rg_run = partial(run, [*mendflow, *flags, pattern], repo), partial(run, rg, repo)
            cli, rg_t = interleaved(ours_run, rg_run, args.repeat)
            label = pattern + (" -i" if icase else "")
            print(
                f"{label:<28} {'yes' if same else 'NO':>5} {len(theirs.splitlines()):>6} "
                f"{inner[0]:>7.1f} / {inner[1]:<5.1f} {cli[0]:>5.1f} / {cli[1]:<5.1f} {rg_t[0]:>5.1f} / {rg_t[1]:<5.1f}"
                f" {cli[0] / rg_t[0]:>5.2f} / {cli[1] / rg_t[1]:<5.2f}"
            )


if __name__ == "__main__":
    main()
