"""Retrieval quality on SymPy 1.14.0 (run by hand; prints a table). Not a test.

Data: /work/shared/bench-data/retrieval/sympy-1.14.0.jsonl (500 commit subjects → gold files; see its
README). File-level scoring: a query hits at k when a gold file is among the top k distinct files; test files
are excluded like the anchor's corpus (whole-file BM25: R@1 0.360, R@5 0.562, R@10 0.644, MRR 0.455).

    uv run python bench/retrieval_bench.py --repo /tmp/mendflow-bench/sympy-1.14.0 [--local-model PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from rag_indexer.api import open_index
from rag_indexer.config import IndexerConfig

DATA = Path("/work/shared/bench-data/retrieval/sympy-1.14.0.jsonl")


def is_test(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "/tests/" in f"/{path}" or name.startswith("test_") or name == "conftest.py"


def ranked_files(hits: list[Any]) -> list[str]:
    files: list[str] = []
    for h in hits:
        if h.path.endswith(".py") and not is_test(h.path) and h.path not in files:
            files.append(h.path)
    return files


def evaluate(index: Any, rows: list[dict[str, Any]], repo: str, alpha: float, kind: str | None) -> dict[str, float]:
    hits_at = {1: 0, 5: 0, 10: 0}
    rr, lat = 0.0, []
    for row in rows:
        t = time.perf_counter()
        hits = index.search(row["query"], k=200, alpha=alpha, filters={"repo": repo, "ref": "HEAD", "kind": kind})
        lat.append((time.perf_counter() - t) * 1000)
        files = ranked_files(hits)[:10]
        gold = set(row["files"])
        rank = next((i for i, f in enumerate(files, start=1) if f in gold), None)
        if rank:
            rr += 1 / rank
            for k in hits_at:
                hits_at[k] += rank <= k
    n = len(rows)
    return {
        "R@1": hits_at[1] / n,
        "R@5": hits_at[5] / n,
        "R@10": hits_at[10] / n,
        "MRR": rr / n,
        "p50 ms": statistics.median(lat),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/mendflow-bench"))
    ap.add_argument("--local-model", help="sentence-transformers model name or path for the hybrid rows")
    ap.add_argument("--only-hybrid", action="store_true", help="skip the BM25-only rows")
    args = ap.parse_args()
    rows = [json.loads(line) for line in DATA.read_text().splitlines()]
    repo = str(args.repo.resolve())
    results: list[tuple[str, dict[str, float]]] = []

    config = IndexerConfig(index_dir=args.work / "retrieval-bm25", bm25_max_df_ratio=1.0)
    if not args.only_hybrid:
        with open_index(config=config) as index:
            index.index(repo, "HEAD")
            results.append(("BM25, symbol+file chunks → files", evaluate(index, rows, repo, 0.0, None)))
            results.append(("BM25, file chunks only", evaluate(index, rows, repo, 0.0, "file")))
        for ratio in (0.2, 0.05):
            with open_index(config=config.model_copy(update={"bm25_max_df_ratio": ratio})) as index:
                results.append((f"BM25 df pruning {ratio:.0%}, chunks → files", evaluate(index, rows, repo, 0.0, None)))
    if args.local_model:
        config = IndexerConfig(
            index_dir=args.work / "retrieval-local",
            embeddings="local",
            local_embedding_model=args.local_model,
            embed_max_chars=1500,  # MiniLM reads 256 tokens; longer inputs only cost tokenizer time
            # ~12 texts/s on this 2-core CPU: 40k symbol chunks would take an hour; files take minutes.
            embed_kinds=["file"],
            bm25_max_df_ratio=1.0,
        )
        with open_index(config=config) as index:
            t = time.perf_counter()
            report = index.index(repo, "HEAD")
            print(f"embedded {report.texts_embedded} texts in {time.perf_counter() - t:.0f} s")
            for alpha in (0.0, 0.3, 0.5, 1.0):
                name = f"hybrid a={alpha} (file vectors), chunks → files"
                results.append((name, evaluate(index, rows, repo, alpha, None)))

    print(f"\n{'mode':<40} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'p50 ms':>7}")
    print(f"{'anchor: whole-file BM25 (rank_bm25)':<40} {0.360:>6.3f} {0.562:>6.3f} {0.644:>6.3f} {0.455:>6.3f}")
    for name, m in results:
        print(f"{name:<40} {m['R@1']:>6.3f} {m['R@5']:>6.3f} {m['R@10']:>6.3f} {m['MRR']:>6.3f} {m['p50 ms']:>7.1f}")


if __name__ == "__main__":
    main()
