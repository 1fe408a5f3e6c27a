"""Benchmark (issue 14): mendflow on real Python libraries exactly as their maintainers publish them.

    uv run --frozen python bench/real_repos.py [--libraries humanize,tomlkit] [--work DIR] [--json FILE]

Per library (its PyPI sdist, cached under ``~/.cache/mendflow/bench/sdists``, made into a git repo with one
commit and nothing changed):

1. **B1 as shipped**: the ``ci-build`` flow; status and reason, line and branch coverage, seconds.
2. **Half-removed protocol**: a second commit deletes every second test file (sorted paths), or every second
   test function when the suite is a single file; the offline loop (``self_healing_pipeline``: offline
   planner, Pynguin, gates, B2, merge) runs on it. *Recovered* is the share of the line (branch) coverage
   the deletion lost that the loop's merged tests won back: ``(after - half) / (shipped - half)``.
3. **Kept tests, 5 more runs** in the library's own environment: a venv with the project and its declared
   test dependencies (the runner's own installer, outside mendflow's sandbox), pytest on exactly the kept node
   ids; a kept test that fails in any run counts as failing, one that fails in some runs as flaky.

Wall time per stage comes from the flow run's task runs. Not a test; prints a Markdown table (and JSON).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # mendflow_runner and mendflow_testgen come installed

import pygit2  # noqa: E402
from build_bench import start_prefect  # noqa: E402
from mendflow_runner import deps, proc  # noqa: E402
from mendflow_testgen import edit  # noqa: E402
from pipeline_bench import _junit, stage_times  # noqa: E402

from tests.fixtures.repos import commit_files  # noqa: E402

CACHE = Path(os.environ.get("MENDFLOW_BENCH_CACHE", Path.home() / ".cache" / "mendflow" / "bench"))
DEFAULT_WORK = Path("/var/tmp/mendflow-real-repos")
RERUNS = 5
# Chosen for variety (what each brings is in bench/README.md): src and flat layouts; tests in tests/, test/,
# testing/, inside the package or one root file; hatchling, poetry-core, pdm-backend, flit, setuptools (setup.py
# and pyproject); tox; parallel coverage; strict mypy; no ruff config; hypothesis; an untested module.
LIBRARIES: dict[str, str] = {
    "humanize": "4.17.0",
    "tomlkit": "0.15.2",
    "iso8601": "2.1.0",
    "marko": "2.2.4",
    "dep-logic": "0.7.2",
    "itsdangerous": "2.2.0",
    "ordered-set": "4.1.0",
    "python-slugify": "9.2.0",
    "pluggy": "1.7.0",
    "cachetools": "8.0.2",
    "schema": "0.7.8",
    "xmltodict": "1.0.4",
    "markdown": "3.7",
    "decorator": "5.1.1",
}


@dataclass
class Cov:
    line: float | None = None
    branch: float | None = None


@dataclass
class Row:
    library: str
    b1_status: str = ""
    b1_reason: str = ""
    shipped: Cov = field(default_factory=Cov)
    half: Cov = field(default_factory=Cov)
    after: Cov = field(default_factory=Cov)
    removed: str = ""  # what the protocol deleted
    outcome: str = ""
    kept: int = 0
    kept_failing: list[str] = field(default_factory=list)
    kept_flaky: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    error: str = ""  # a traceback's last line: the bench's target is that there is none

    def recovered(self, kind: str) -> float | None:
        full, half, after = (getattr(c, kind) for c in (self.shipped, self.half, self.after))
        if full is None or half is None or after is None or full <= half:
            return None
        return max(0.0, min(1.0, (after - half) / (full - half)))


# -- the library as shipped -----------------------------------------------------------------------------------
def sdist(name: str, version: str) -> Path:
    cache = CACHE / "sdists"
    if found := _cached_sdist(cache, name, version):
        return found
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(["uv", "tool", "run", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    f"{name}=={version}", "-d", str(cache)], check=True)  # fmt: skip
    found = _cached_sdist(cache, name, version)
    assert found is not None, f"pip downloaded no sdist of {name}=={version}"
    return found


def _cached_sdist(cache: Path, name: str, version: str) -> Path | None:
    """The sdist in ``cache`` by its name as PEP 625 normalises it (Automat's is automat-25.4.16.tar.gz)."""
    wanted = _normalised(f"{name}-{version}.tar.gz")
    return next((path for path in sorted(cache.glob("*.tar.gz")) if _normalised(path.name) == wanted), None)


def _normalised(filename: str) -> str:
    return re.sub(r"[-_.]+", "-", filename).lower()


def as_shipped(name: str, version: str, work: Path) -> Path:
    """The sdist's tree as a git repo on main with one commit: nothing added, nothing changed."""
    target = work / "repos" / name
    shutil.rmtree(target, ignore_errors=True)
    unpack = work / "unpack" / name
    shutil.rmtree(unpack, ignore_errors=True)
    with tarfile.open(sdist(name, version)) as tar:
        tar.extractall(unpack, filter="data")
    shutil.move(next(p for p in unpack.iterdir() if p.is_dir()), target)
    for stray in target.rglob(".git"):  # a submodule's pointer file left in the sdist: git never commits one
        stray.unlink() if stray.is_file() else shutil.rmtree(stray)
    pygit2.init_repository(str(target), initial_head="main")
    commit_files(target, {}, f"{name} {version} as published on PyPI", ignored_too=True)
    return target


# -- the half-removed protocol --------------------------------------------------------------------------------
def test_files(repo: Path) -> list[str]:
    tree = pygit2.Repository(str(repo)).head.peel(pygit2.Commit).tree
    found = []
    for path in _paths(tree, ""):
        name = path.rsplit("/", 1)[-1]
        # pytest's default patterns, and the test.py a unittest suite may be (decorator's src/tests/test.py)
        if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py") or name == "test.py"):
            found.append(path)
    return sorted(found)


def _paths(tree: pygit2.Tree, prefix: str) -> list[str]:
    out = []
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            out += _paths(entry, f"{path}/")
        else:
            out.append(path)
    return out


def remove_half(repo: Path) -> str:
    """Commit the protocol's deletion; returns what it deleted."""
    files = test_files(repo)
    if len(files) > 1:
        # A file another remaining test file imports stays: deleting it would break collection, not remove tests.
        imported = set().union(*(imported_names(repo / f) for f in files[0::2]))
        gone = [f for f in files[1::2] if Path(f).stem not in imported]
        commit_files(repo, dict.fromkeys(gone), "bench: every second test file removed")
        return f"{len(gone)} of {len(files)} test files"
    [only] = files
    source = (repo / only).read_text(encoding="utf-8")
    names = edit.test_names(source)
    gone_names = set(names[1::2])
    (repo / only).write_text(edit.remove_functions(source, gone_names), encoding="utf-8")
    # The imports only the removed tests used go too, and the file is formatted as the repo formats it, as a
    # person deleting tests would: else the commit brings new lint findings and the loop heals those instead.
    ruff = str(Path(sys.executable).with_name("ruff"))
    fix = [ruff, "check", "--isolated", "--select", "F401", "--fix", "--unsafe-fixes", "-q", only]
    subprocess.run(fix, cwd=repo, check=False, capture_output=True)
    drop_unused_fallback_imports(repo / only, ruff)
    if (repo / "ruff.toml").is_file() or "[tool.ruff" in _text(repo / "pyproject.toml"):
        subprocess.run([ruff, "format", "-q", only], cwd=repo, check=False, capture_output=True)
    commit_files(repo, {}, "bench: every second test removed")
    return f"{len(gone_names)} of {len(names)} tests in {only}"


def drop_unused_fallback_imports(path: Path, ruff: str) -> None:
    """Delete a top-level ``try: import X / except ImportError: import Y`` that only removed tests used: ruff
    offers no fix for an unused import guarded that way."""
    check = [ruff, "check", "--isolated", "--select", "F401", "--output-format", "json", "-q", path.name]
    found = subprocess.run(check, cwd=path.parent, check=False, capture_output=True, text=True).stdout
    unused = {f["location"]["row"] for f in json.loads(found or "[]")}
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    for node in reversed(ast.parse(source).body):
        if not isinstance(node, ast.Try):
            continue
        imports = [s for s in [*node.body, *(s for h in node.handlers for s in h.body)] if not isinstance(s, ast.Pass)]
        if imports and all(isinstance(s, ast.Import | ast.ImportFrom) and s.lineno in unused for s in imports):
            del lines[node.lineno - 1 : node.end_lineno]
    path.write_text("".join(lines), encoding="utf-8")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def imported_names(path: Path) -> set[str]:
    """Every dotted-name part a module imports (``from .test_a import X`` gives ``test_a``)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= set((node.module or "").split(".")) | {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {part for a in node.names for part in a.name.split(".")}
    return names


# -- running mendflow -----------------------------------------------------------------------------------------
def cov_of(report: Any) -> Cov:
    if report is None or report.coverage is None:
        return Cov()
    return Cov(report.coverage.line_pct, report.coverage.branch_pct)


def b1_as_shipped(repo: Path, row: Row) -> None:
    from flows.ci import ci_build

    start = time.perf_counter()
    report = ci_build(repo=str(repo), stage="B1")
    row.seconds["B1 as shipped"] = time.perf_counter() - start
    row.b1_status = report.status.value
    reason = report.error_reason or (report.fail_reason.value if report.fail_reason else "")
    if report.failed_tests:
        reason = f"{len(report.failed_tests)} failing, e.g. {report.failed_tests[0]}"
    row.b1_reason = reason[:160]
    row.shipped = cov_of(report)


def loop_on_half(repo: Path, row: Row) -> Any:
    from flows.pipeline import self_healing_pipeline
    from tasks.outcome import pipeline_result

    start = time.perf_counter()
    state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)
    row.seconds["loop"] = time.perf_counter() - start
    result = pipeline_result(state)
    try:
        row.seconds.update(stage_times(state.state_details.flow_run_id))
    except Exception as exc:  # timings are a nicety; the figures below still stand
        row.error = f"task-run timings unavailable: {exc}"
    row.outcome = result.outcome.value
    row.half = cov_of(result.b1)
    merged = result.outcome.value in ("merged", "ready")
    row.after = cov_of(result.b3 or result.b2) if merged else row.half
    if result.generated is not None:
        row.kept = len(result.generated.kept) if merged else 0
    return result


def rerun_kept(repo: Path, result: Any, work: Path, row: Row) -> None:
    """The kept tests, RERUNS times, in a venv the library's own declarations make (no sandbox, no mendflow)."""
    if not row.kept or not result.merged_sha:
        return
    tree = work / "rerun" / row.library
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["git", "worktree", "add", "-f", "--detach", str(tree), result.merged_sha], cwd=repo,
                   check=True, capture_output=True)  # fmt: skip
    venv = work / "rerun-venv" / row.library
    shutil.rmtree(venv, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installer = deps.Installer(tree, venv, sys.executable, env, proc.Log(work / f"rerun-{row.library}.log"))
    with contextlib.redirect_stdout(io.StringIO()):  # the runner's log echoes each command; the table is stdout
        installer.install(lambda: 900.0)
    nodes = [k.node_id for k in result.generated.kept]
    fails: dict[str, int] = {}
    for i in range(RERUNS):
        junit = work / f"rerun-{row.library}-{i}.xml"
        argv = [installer.venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *nodes]
        subprocess.run(argv, cwd=tree, env=env, capture_output=True, check=False)
        for failed in _junit(junit)[1]:
            fails[failed] = fails.get(failed, 0) + 1
    row.kept_failing = sorted(n for n, c in fails.items() if c == RERUNS)
    row.kept_flaky = sorted(n for n, c in fails.items() if c < RERUNS)


def run_library(name: str, version: str, work: Path) -> Row:
    row = Row(f"{name}=={version}")
    try:
        repo = as_shipped(name, version, work)
        b1_as_shipped(repo, row)
        row.removed = remove_half(repo)
        result = loop_on_half(repo, row)
        rerun_kept(repo, result, work, row)
    except Exception as exc:
        row.error = "".join(traceback.format_exception_only(exc)).strip().splitlines()[-1][:200]
        (work / f"{name}.traceback").write_text(traceback.format_exc())
    return row


# -- the table ------------------------------------------------------------------------------------------------
def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def _cov(c: Cov) -> str:
    return f"{_pct(c.line)} / {_pct(c.branch)}"


def table(rows: list[Row]) -> str:
    head = ["library", "B1 as shipped", "shipped line/branch", "half removed", "after the loop", "recovered line",
            "recovered branch", "outcome", "kept", "kept failing/flaky (5 runs)", "B1 s", "plan s", "generate s",
            "B2 s", "loop s"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        status = r.b1_status + (f" ({r.b1_reason})" if r.b1_reason and r.b1_status != "PASSED" else "")
        cells = [r.library, status or f"error: {r.error}", _cov(r.shipped), f"{_cov(r.half)} ({r.removed})",
                 _cov(r.after), _share(r.recovered("line")), _share(r.recovered("branch")), r.outcome, str(r.kept),
                 f"{len(r.kept_failing)}/{len(r.kept_flaky)}"]  # fmt: skip
        cells += [f"{r.seconds[k]:.0f}" if k in r.seconds else "—" for k in ("B1 as shipped", "plan", "generate")]
        cells += [f"{r.seconds[k]:.0f}" if k in r.seconds else "—" for k in ("B2", "loop")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n" + summary(rows)


def summary(rows: list[Row]) -> str:
    passed = sum(r.b1_status == "PASSED" for r in rows)
    line = [v for r in rows if (v := r.recovered("line")) is not None]
    branch = [v for r in rows if (v := r.recovered("branch")) is not None]
    failing = sum(len(r.kept_failing) + len(r.kept_flaky) for r in rows)
    errors = [f"{r.library}: {r.error}" for r in rows if r.error]
    return (
        f"B1 PASSED as shipped: {passed}/{len(rows)}; median recovered: line "
        f"{_share(statistics.median(line) if line else None)}, branch "
        f"{_share(statistics.median(branch) if branch else None)}; kept tests failing or flaky in 5 reruns: "
        f"{failing}; errors: {errors or 'none'}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--libraries", help="comma-separated names from LIBRARIES (default: all)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    chosen = args.libraries.split(",") if args.libraries else list(LIBRARIES)
    unknown = [n for n in chosen if n not in LIBRARIES]
    if unknown:
        parser.error(f"unknown libraries: {', '.join(unknown)} (known: {', '.join(LIBRARIES)})")
    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.environ["MENDFLOW_STATE_DIR"] = str(work / "state")  # the dependency cache stays shared: warm installs
    os.environ.pop("MENDFLOW_LLM__BASE_URL", None)  # the offline loop: planner and generator without an LLM
    server = start_prefect(work)
    rows = []
    try:
        for name in chosen:
            row = run_library(name, LIBRARIES[name], work)
            rows.append(row)
            print(f"{row.library}: B1 {row.b1_status}, {row.outcome}, kept {row.kept}, recovered "
                  f"{_share(row.recovered('line'))}/{_share(row.recovered('branch'))} {row.error}",
                  file=sys.stderr, flush=True)  # fmt: skip
    finally:
        os.killpg(server.pid, 15)
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
