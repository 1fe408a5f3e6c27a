"""Mine a retrieval query set from a repository's git history (run by hand). Not a test.

The rules are the shared SymPy set's (``../shared/bench-data/retrieval/README.md`` beside the checkout): non-merge
commits reachable from the tag that change 1-3 non-test source files, all still present at the tag; chores and
reverts dropped; a fixed-seed sample. Each line: {"query": <subject>, "files": [<gold paths>], "commit": <sha>}.

    uv run --frozen python bench/mine_queries.py --git-dir /work/.mirror/psf+requests/repo --tag v2.34.2 \\
        --ext .py --out bench/data/retrieval/requests-2.34.2.jsonl [--exclude docs/ --limit 500 --seed 18]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Conventional-commit chores and release/merge bookkeeping: their subjects say nothing about the code.
CHORE = re.compile(
    r"^\s*(chore|build|ci|docs?|style|release|deps|bump)\b|^\s*(bump|release|prepare|version|v?\d+\.\d+(\.\d+)?)\b"
    r"|^\s*merge\b|\bdependabot\b",
    re.IGNORECASE,
)
REVERT = re.compile(r"^\s*revert\b", re.IGNORECASE)
# Where no one keeps hand-written source: build output and vendored code.
# The shared query sets live in ../shared beside the checkout (as CI lays them out).
SHARED_RETRIEVAL = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "retrieval"
SYMPY_QUERIES = SHARED_RETRIEVAL / "sympy-1.14.0.jsonl"
GENERATED_DIRS = ("dist/", "build/", "vendor/", "node_modules/", "third_party/")


def is_test(path: str) -> bool:
    """Test files by the conventions of Python, Go and JS/TS (folders tests/, __tests__/, names)."""
    parts = path.split("/")
    name = parts[-1]
    folders = {p.lower() for p in parts[:-1]}
    if folders & {"test", "tests", "testing", "__tests__", "spec", "__mocks__", "testdata", "fixtures"}:
        return True
    stem = name.rsplit(".", 1)[0]
    return (
        name.startswith("test_")
        or name == "conftest.py"
        or stem.endswith(("_test", ".test", ".spec", "-test", "_spec"))
        or stem in ("test", "tests")
    )


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    files: tuple[str, ...]


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True, errors="replace"
    ).stdout


def commits(git_dir: Path, tag: str) -> Iterator[Commit]:
    """Non-merge commits reachable from the tag, with the paths each changed (renames as their new path)."""
    out = git(git_dir, "log", "--no-merges", "--no-renames", "--format=%x00%H%x01%s", "--name-only", tag)
    for record in out.split("\0")[1:]:
        head, _, names = record.partition("\n")
        sha, _, subject = head.partition("\x01")
        yield Commit(sha, subject.strip(), tuple(n for n in names.splitlines() if n.strip()))


def is_source(path: str, exts: tuple[str, ...], excluded: tuple[str, ...]) -> bool:
    if not path.endswith(exts) or path.endswith(".d.ts") or is_test(path):
        return False
    return not any(path.startswith(p) or f"/{p}" in f"/{path}" for p in (*GENERATED_DIRS, *excluded))


def mine(
    git_dir: Path, tag: str, exts: tuple[str, ...], excluded: tuple[str, ...], limit: int, seed: int
) -> list[dict[str, object]]:
    present = set(git(git_dir, "ls-tree", "-r", "--name-only", tag).splitlines())
    kept: list[dict[str, object]] = []
    for c in commits(git_dir, tag):
        if not c.subject or CHORE.search(c.subject) or REVERT.search(c.subject):
            continue
        gold = sorted({f for f in c.files if is_source(f, exts, excluded)})
        if not 1 <= len(gold) <= 3 or not all(f in present for f in gold):
            continue
        kept.append({"query": c.subject, "files": gold, "commit": c.sha})
    kept.sort(key=lambda row: str(row["commit"]))  # the sample must not depend on git log's order
    return random.Random(seed).sample(kept, min(limit, len(kept)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dir", type=Path, required=True, help="a clone or bare mirror of the repository")
    ap.add_argument("--tag", required=True)
    ap.add_argument("--ext", action="append", required=True, help="source extension, e.g. .py (repeatable)")
    ap.add_argument("--exclude", action="append", default=[], help="path prefix that is not source (repeatable)")
    ap.add_argument("--limit", type=int, default=500)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    try:
        rows = mine(args.git_dir, args.tag, tuple(args.ext), tuple(args.exclude), args.limit, args.seed)
    except subprocess.CalledProcessError as exc:
        sys.exit(f"error: git failed: {exc.stderr.strip().splitlines()[-1] if exc.stderr.strip() else exc}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    print(f"{len(rows)} queries -> {args.out}")


if __name__ == "__main__":
    main()
