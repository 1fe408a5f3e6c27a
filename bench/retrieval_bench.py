"""Retrieval quality on any query set (run by hand; prints a table or JSON lines). Not a test.

A query set is JSON lines {"query", "files", "commit"} (see bench/data/retrieval/README.md and the shared SymPy
set's README). File-level scoring: a query hits at k when a gold file is among the top k distinct files.
Only candidate files count: non-test files with an extension the set's gold files use, so test files are
excluded on both sides. Methods:

- ``mendflow``: the code index's file ranking (``CodeIndex.search_files``: chunk hits aggregated per file,
  path words, a length prior, tests below sources, files the query names by file name or path first), with
  the index's default settings;
- ``bm25_file``: whole-file Okapi BM25 (rank_bm25's BM25Okapi formula and defaults, k1 1.5, b 0.75,
  epsilon 0.25) over identifier-split tokens of the candidate files; on SymPy it reproduces the shared anchor.

    uv run --frozen python bench/retrieval_bench.py --queries bench/data/retrieval/cobra-1.10.2.jsonl \\
        --repo /tmp/mendflow-bench/cobra-1.10.2 --prepare /work/.mirror/spf13+cobra/repo --tag v1.10.2 [--json] \\
        [--local-model PATH] [--wordllama ALPHAS [--embed-chars N]]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mine_queries  # bench/ is not a package: its own folder goes on the path

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
# camelCase / PascalCase / ACRONYMWords / digits: "parseHTTPResponse2" -> parse, HTTP, Response, 2.
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
Ranker = Callable[[str], list[str]]


def tokens(text: str) -> list[str]:
    """Identifier-split, lower-cased tokens: a snake_case or CamelCase name gives its words and itself.

    Keeping the whole name as well came closest to the shared SymPy anchor (0.354/0.546/0.632/0.439 against
    0.360/0.562/0.644/0.455; words alone gave 0.324/0.544/0.618/0.414).
    """
    out: list[str] = []
    for word in IDENT.findall(text):
        parts = [p.lower() for piece in word.split("_") if piece for p in CAMEL.findall(piece)]
        out.extend(parts)
        if len(parts) > 1:
            out.append(word.lower())
    return out


class OkapiBM25:
    """rank_bm25.BM25Okapi's scoring (same IDF floor), over an inverted index so a query touches only postings."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b = k1, b
        self.lengths = [len(d) for d in docs]
        avgdl = sum(self.lengths) / max(1, len(docs))
        self.norm = [k1 * (1 - b + b * n / avgdl) for n in self.lengths]
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                self.postings[term].append((i, tf))
        n = len(docs)
        idf = {t: math.log(n - len(p) + 0.5) - math.log(len(p) + 0.5) for t, p in self.postings.items()}
        floor = epsilon * sum(idf.values()) / max(1, len(idf))
        self.idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}

    def scores(self, query: list[str]) -> dict[int, float]:
        out: dict[int, float] = defaultdict(float)
        for term in query:  # repeated query terms count again, as in BM25Okapi.get_scores
            idf = self.idf.get(term, 0.0)
            for i, tf in self.postings.get(term, ()):
                out[i] += idf * tf * (self.k1 + 1) / (tf + self.norm[i])
        return out


def candidates(repo: Path, exts: tuple[str, ...]) -> list[str]:
    """Files of the corpus that count: the set's source extensions, no tests, no build output or vendored code."""
    listed = subprocess.run(["git", "-C", str(repo), "ls-files"], check=True, capture_output=True, text=True).stdout
    return [p for p in listed.splitlines() if mine_queries.is_source(p, exts, ())]


def bm25_file(repo: Path, files: list[str]) -> Ranker:
    texts = [(repo / f).read_text(errors="replace") for f in files]
    model = OkapiBM25([tokens(t) for t in texts])

    def rank(query: str) -> list[str]:
        scored = model.scores(tokens(query))
        return [files[i] for i in sorted(scored, key=lambda i: -scored[i])[:10]]

    return rank


def mendflow_search(index: Any, repo: Path, allowed: set[str]) -> Ranker:
    filters = {"repo": str(repo), "ref": "HEAD"}

    def rank(query: str) -> list[str]:
        ranked: list[str] = []
        for hit in index.search_files(query, k=50, filters=filters):
            if hit.path in allowed and hit.path not in ranked:
                ranked.append(hit.path)
        return ranked[:10]

    return rank


def evaluate(name: str, rank: Ranker, rows: list[dict[str, Any]]) -> dict[str, Any]:
    hits_at = {1: 0, 5: 0, 10: 0}
    rr, lat = 0.0, []
    for row in rows:
        t = time.perf_counter()
        files = rank(row["query"])
        lat.append((time.perf_counter() - t) * 1000)
        gold = set(row["files"])
        found = next((i for i, f in enumerate(files[:10], start=1) if f in gold), None)
        if found:
            rr += 1 / found
            for k in hits_at:
                hits_at[k] += found <= k
    n = len(rows)
    p95 = statistics.quantiles(lat, n=20)[-1] if len(lat) > 1 else lat[0]
    return {
        "method": name, "queries": n, "r1": hits_at[1] / n, "r5": hits_at[5] / n, "r10": hits_at[10] / n,
        "mrr": rr / n, "p50_ms": statistics.median(lat), "p95_ms": p95,
    }  # fmt: skip


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def prepare(repo: Path, source: Path, tag: str | None) -> None:
    """The corpus as one commit in a scratch repo: ``git archive`` of a tag of a mirror, or an unpacked sdist."""
    if (repo / ".git").exists():
        return
    repo.mkdir(parents=True, exist_ok=True)
    if source.name.endswith(".tar.gz"):  # the sdist's top folder is the repo's name (sympy-1.14.0/)
        with tarfile.open(source) as tar:
            tar.extractall(repo.parent, filter="data")
    else:
        if not tag:
            raise SystemExit("error: --prepare from a git directory needs --tag")
        archive = subprocess.run(
            ["git", f"--git-dir={source}", "archive", "--format=tar", tag], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(repo)], input=archive, check=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A", "-f")
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@mendflow.invalid"]
    git(repo, *ident, "commit", "-q", "-m", f"corpus {source.name} {tag or ''}".strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--queries", type=Path, default=mine_queries.SYMPY_QUERIES, help="JSON lines {query, files, commit}"
    )
    ap.add_argument("--repo", type=Path, required=True, help="the corpus: a git work tree at the set's tag")
    ap.add_argument("--prepare", type=Path, help="make --repo first: a bare git dir (with --tag) or an sdist")
    ap.add_argument("--tag")
    ap.add_argument("--work", type=Path, default=Path("/tmp/mendflow-bench"), help="index directories go here")
    ap.add_argument("--json", action="store_true", help="one JSON object per method")
    ap.add_argument("--local-model", help="sentence-transformers model (name or path): adds mendflow_hybrid")
    ap.add_argument(
        "--wordllama",
        metavar="ALPHAS",
        help="comma-separated alphas: adds mendflow_wordllama_<alpha> rows, every chunk embedded by WordLlama",
    )
    ap.add_argument("--embed-chars", type=int, default=6000, help="characters of a chunk WordLlama reads")
    args = ap.parse_args()
    if args.prepare:
        prepare(args.repo, args.prepare, args.tag)
    if not args.queries.is_file() or not (args.repo / ".git").exists():
        raise SystemExit(f"error: need a query file ({args.queries}) and a git work tree ({args.repo})")
    rows = [json.loads(line) for line in args.queries.read_text().splitlines() if line.strip()]
    repo = args.repo.resolve()
    exts = tuple(sorted({"." + f.rsplit(".", 1)[-1] for row in rows for f in row["files"]}))
    files = candidates(repo, exts)
    results = [evaluate("bm25_file", bm25_file(repo, files), rows)]

    from rag_indexer.api import open_index  # late: the baseline alone needs none of mendflow
    from rag_indexer.config import IndexerConfig

    config = IndexerConfig(index_dir=args.work / f"retrieval-{args.queries.stem}")
    with open_index(config=config) as index:
        started = time.perf_counter()
        index.index(str(repo), "HEAD")  # cold when --work has no index of the set yet, else a no-op check
        print(f"mendflow index: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        results.insert(0, evaluate("mendflow", mendflow_search(index, repo, set(files)), rows))
    if args.local_model:
        results.append(hybrid(args, repo, set(files), rows))
    if args.wordllama:
        results.extend(wordllama(args, repo, set(files), rows))
    report(results, args.queries.stem, len(files), args.json)


def hybrid(args: argparse.Namespace, repo: Path, files: set[str], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """search_files with file vectors fused in (alpha 0.3, the best of the 2026-11-22 SymPy run)."""
    from rag_indexer.api import open_index
    from rag_indexer.config import IndexerConfig

    config = IndexerConfig(
        index_dir=args.work / f"retrieval-local-{args.queries.stem}",
        embeddings="local",
        local_embedding_model=args.local_model,
        embed_max_chars=1500,  # MiniLM reads 256 tokens; longer inputs only cost tokenizer time
        embed_kinds=["file"],  # ~12 texts/s on 2 cores: symbol chunks would take an hour on SymPy
        default_alpha=0.3,
    )
    with open_index(config=config) as index:
        index.index(str(repo), "HEAD")
        return evaluate("mendflow_hybrid", mendflow_search(index, repo, files), rows)


def wordllama(
    args: argparse.Namespace, repo: Path, files: set[str], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """search_files fused with WordLlama vectors of every chunk, at each of ``--wordllama``'s alphas."""
    from rag_indexer.api import open_index
    from rag_indexer.config import IndexerConfig

    index_dir = args.work / f"retrieval-wordllama{args.embed_chars}-{args.queries.stem}"
    results = []
    for alpha in (float(a) for a in args.wordllama.split(",")):
        config = IndexerConfig(
            index_dir=index_dir, embeddings="wordllama", default_alpha=alpha, embed_max_chars=args.embed_chars
        )
        with open_index(config=config) as index:
            started = time.perf_counter()
            index.index(str(repo), "HEAD")  # the first alpha's builds it; the others' find it current
            print(f"wordllama index: {time.perf_counter() - started:.1f} s", file=sys.stderr)
            results.append(evaluate(f"mendflow_wordllama_{alpha:g}", mendflow_search(index, repo, files), rows))
    return results


def report(results: list[dict[str, Any]], name: str, files: int, as_json: bool) -> None:
    if as_json:
        for r in results:
            print(json.dumps({"set": name, "files": files, **r}))
        return
    print(f"\n{name}: {results[0]['queries']} queries, {files} candidate files")
    print(f"{'method':<16} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'p50 ms':>7} {'p95 ms':>7}")
    for r in results:
        print(
            f"{r['method']:<16} {r['r1']:>6.3f} {r['r5']:>6.3f} {r['r10']:>6.3f} {r['mrr']:>6.3f} "
            f"{r['p50_ms']:>7.1f} {r['p95_ms']:>7.1f}"
        )


if __name__ == "__main__":
    main()
