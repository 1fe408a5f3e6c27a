"""Index benchmark on SymPy 1.14.0 (run by hand; prints a table). Not a test.

    pip download --no-deps --no-binary :all: sympy==1.14.0 -d /tmp/mendflow-bench
    uv run python bench/index_bench.py --sdist /tmp/mendflow-bench/sympy-1.14.0.tar.gz

Measures: cold index ÷ tree-sitter parse-only, one-file re-index, no-op re-index, query p50/p95 on the
embedded store at >= 100k chunks (variant branches with every .py blob changed), grep_like vs rg, peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mine_queries

from rag_indexer.api import open_index
from rag_indexer.config import IndexerConfig
from rag_indexer.languages import grammar, has_grammar
from rag_indexer.reader import TreeReader, decode_blob, is_binary

SIG = pygit2.Signature("bench", "bench@mendflow.invalid", 1_700_000_000, 0)


def scratch_repo(sdist: Path, work: Path) -> Path:
    """The sdist unpacked and committed (once) into work/sympy-1.14.0 on branch main."""
    root = work / "sympy-1.14.0"
    if (root / ".git").exists():
        return root
    with tarfile.open(sdist) as tar:
        tar.extractall(work, filter="data")
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "sympy 1.14.0 sdist", repo.index.write_tree(), [])
    return root


def parse_only(root: Path, config: IndexerConfig) -> tuple[float, int]:
    """Read every indexable blob of HEAD and parse it with tree-sitter: the floor an indexer cannot beat."""
    repo = pygit2.Repository(str(root))
    start = time.perf_counter()
    reader = TreeReader(repo, config)
    listing = reader.listing(repo.head.peel(pygit2.Commit))
    parsed = 0
    seen: set[str] = set()
    for entry in listing.entries:
        if entry.blob_sha in seen or not has_grammar(entry.language):
            continue
        seen.add(entry.blob_sha)
        data = reader.read(entry.blob_sha)  # the indexer's own read path, so both sides read alike
        if is_binary(data):
            continue
        grammar(entry.language).parser().parse(decode_blob(data).text.encode())
        parsed += 1
    return time.perf_counter() - start, parsed


def commit_change(root: Path, rel: str, extra: str) -> None:
    repo = pygit2.Repository(str(root))
    path = root / rel
    path.write_text(path.read_text() + extra)
    repo.index.add(rel)
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, f"touch {rel}", repo.index.write_tree(), [repo.head.target])


def variant_branch(root: Path, n: int) -> str:
    """Branch variant-n: every .py blob gets a trailing comment, so all its chunks are new content."""
    repo = pygit2.Repository(str(root))
    name = f"variant-{n}"
    if name in repo.branches.local:
        return name
    base = repo.head.peel(pygit2.Commit)
    index = pygit2.Index()
    index.read_tree(base.tree)
    for entry in list(index):
        if entry.path.endswith(".py"):
            data = bytes(repo[entry.id].peel(pygit2.Blob).data) + f"\n# variant {n}\n".encode()
            index.add(pygit2.IndexEntry(entry.path, repo.create_blob(data), entry.mode))
    tree = index.write_tree(repo)
    oid = repo.create_commit(None, SIG, SIG, name, tree, [base.id])
    repo.branches.local.create(name, repo[oid].peel(pygit2.Commit))
    return name


def timed(fn, repeat: int = 1):  # type: ignore[no-untyped-def]
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (index helpers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def cpu_timed(fn):  # type: ignore[no-untyped-def]
    """(wall, cpu, result): CPU time is the fairer ratio on a shared, loaded 2-core machine."""
    w, c = time.perf_counter(), _cpu()
    result = fn()
    return time.perf_counter() - w, _cpu() - c, result


def warm_up(work: Path, config: IndexerConfig) -> None:
    """Index a one-file repository once, untimed, so the timed runs start with the index's modules imported.

    The parse side starts with tree_sitter and pygit2 imported. The index imports its store, numpy (gram
    signatures) and helpers lazily, on its first run in a process (~0.25 s of CPU): a cost of the process,
    not of indexing, that the one-process run would otherwise carry and the default run (second) would not.
    Helper processes still pay their own imports inside the timed default run.
    """
    root = work / "warm-up"
    shutil.rmtree(root, ignore_errors=True)
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("def f(x):\n    return x\n")
    repo = pygit2.init_repository(str(root), initial_head="main")
    repo.index.add_all()
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "warm up", repo.index.write_tree(), [])
    with open_index(config=config.model_copy(update={"index_dir": root / "index", "processes": 1})) as idx:
        idx.index(root, "HEAD")
    shutil.rmtree(root)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdist", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/mendflow-bench"))
    ap.add_argument("--target-chunks", type=int, default=100_000)
    ap.add_argument(
        "--cold-only", action="store_true", help="stop after the cold index ratios (skip re-index, search, grep)"
    )
    ap.add_argument("--no-warm-up", action="store_true", help="time the first index of this process, imports included")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    root = scratch_repo(args.sdist, args.work)
    index_dir = args.work / "index"
    shutil.rmtree(index_dir, ignore_errors=True)
    config = IndexerConfig(index_dir=index_dir)
    rows: list[tuple[str, str, str]] = []

    parse_s, parse_cpu, (_, parsed) = cpu_timed(lambda: parse_only(root, config))
    rows.append(("tree-sitter parse-only (read + parse)", f"{parse_s:.2f} s", f"cpu {parse_cpu:.2f} s, {parsed} blobs"))

    if not args.no_warm_up:
        warm_up(args.work, config)
    # One process first, in its own directory, then the default (helpers on every core) that the rest uses.
    alone_dir = args.work / "index-one-process"
    shutil.rmtree(alone_dir, ignore_errors=True)
    with open_index(config=config.model_copy(update={"index_dir": alone_dir, "processes": 1})) as one_idx:
        single_s, single_cpu, _ = cpu_timed(lambda: one_idx.index(root, "HEAD"))
    shutil.rmtree(alone_dir, ignore_errors=True)
    idx = open_index(config=config)
    cold_s, cold_cpu, report = cpu_timed(lambda: idx.index(root, "HEAD"))
    rss_cold = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    procs = min(4, os.cpu_count() or 1)
    rows.append(
        (
            f"cold index, default ({procs} processes)",
            f"{cold_s:.2f} s",
            f"cpu {cold_cpu:.2f} s incl. helpers, {report.chunks_written} chunks, {report.blobs_parsed} blobs",
        )
    )
    rows.append(("cold ÷ parse-only (target <= 2)", f"{cold_s / parse_s:.2f}", f"cpu {cold_cpu / parse_cpu:.2f}"))
    rows.append(
        (
            "cold index, one process ÷ parse-only",
            f"{single_s / parse_s:.2f}",
            f"{single_s:.2f} s; cpu {single_cpu:.2f} s = {single_cpu / parse_cpu:.2f} x parse cpu",
        )
    )

    if args.cold_only:
        idx.close()
        _print_rows(rows)
        return

    noop_s, _ = timed(lambda: idx.index(root, "HEAD"), repeat=3)
    rows.append(("no-op re-index (target <= 0.5 s)", f"{noop_s * 1000:.0f} ms", ""))

    commit_change(root, "sympy/core/mul.py", "\n\ndef bench_helper(x):\n    return x\n")
    one_s, one = timed(lambda: idx.index(root, "HEAD"))
    rows.append(
        (
            "one-file re-index (target <= 1 s, <= 2 % cold)",
            f"{one_s * 1000:.0f} ms",
            f"{one_s / cold_s * 100:.1f} % of cold; parsed {one.blobs_parsed}",
        )
    )

    # Grow the store to >= target chunks with variant branches (new content, not copies of ids).
    store = idx.store
    chunks = store._query("SELECT count(*) FROM chunks")[0][0]  # type: ignore[attr-defined]
    n = 0
    while chunks < args.target_chunks:
        n += 1
        idx.index(root, variant_branch(root, n))
        chunks = store._query("SELECT count(*) FROM chunks")[0][0]  # type: ignore[attr-defined]
    rows.append(("store size for queries", f"{chunks} chunks", f"{1 + n} refs"))

    queries = [json.loads(line)["query"] for line in mine_queries.SYMPY_QUERIES.read_text().splitlines()]
    repo_key = str(root.resolve())
    scope = {"repo": repo_key, "ref": "HEAD"}
    for ratio, label in ((config.bm25_max_df_ratio, "default df pruning"), (1.0, "exact BM25")):
        with open_index(config=config.model_copy(update={"bm25_max_df_ratio": ratio})) as q_idx:
            for q in queries[:20]:  # warm the page cache and the df cache
                q_idx.search(q, k=10, filters=scope)
            lat = []
            for q in queries:
                t = time.perf_counter()
                q_idx.search(q, k=10, filters=scope)
                lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        p50, p95 = statistics.median(lat), lat[int(len(lat) * 0.95) - 1]
        rows.append(
            (
                f"search p50 / p95, {label} (target p95 <= 50 ms)",
                f"{p50:.1f} / {p95:.1f} ms",
                f"{len(lat)} queries, k=10",
            )
        )

    greps = (
        ("ZeroDivisionError", False, False),
        ("_eval_is_zero", False, False),
        (r"def _eval_\w+\(self\)", True, False),
        ("zerodivisionerror", False, True),
    )
    for pattern, regex, icase in greps:
        g_s, hits = timed(
            lambda p=pattern, r=regex, i=icase: idx.grep_like(
                p, regex=r, ignore_case=i, limit=100_000, filters={"repo": repo_key, "ref": "HEAD"}
            ),
            repeat=3,
        )
        cmd = ["rg", "-n", "--no-heading", *(["-i"] if icase else []), *([] if regex else ["-F"]), pattern, "."]
        r_s, out = timed(lambda c=cmd: subprocess.run(c, cwd=root, capture_output=True, text=True), repeat=3)
        lines = len(out.stdout.splitlines())
        line_hits = sum(1 for h in hits if h.kind == "line")
        rows.append(
            (
                f"grep_like {pattern!r}{' -i' if icase else ''} vs rg",
                f"{g_s * 1000:.0f} ms vs {r_s * 1000:.0f} ms",
                f"{line_hits} vs {lines} lines",
            )
        )

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    helper = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child: an index helper
    rows.append(("peak RSS after cold index / overall", f"{rss_cold:.0f} / {peak:.0f} MiB", f"helper {helper:.0f} MiB"))
    size = sum(p.stat().st_size for p in index_dir.iterdir()) / 2**20
    rows.append(("index directory size", f"{size:.0f} MiB", ""))
    idx.close()
    _print_rows(rows)


def _print_rows(rows: list[tuple[str, str, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"\n{'measure':<{width}}  {'value':>22}  note")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>22}  {note}")


if __name__ == "__main__":
    main()
