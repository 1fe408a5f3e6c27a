"""Benchmark (issue 6): the offline self-healing loop vs Pynguin alone, same modules, same budget.

Subjects: the shipped example (examples/calc) and two small pure-Python libraries from their PyPI sdists,
which ship tests that run with plain pytest and need nothing else: isodate 0.7.2 and schema 0.7.8.

    uv run python bench/pipeline_bench.py [--subjects calc,isodate,schema]

For each subject: ``self_healing_pipeline`` (B1 → offline planner → Pynguin + gates → B2 → merge) against a
Prefect server started here, stage times from its task runs; then Pynguin 0.48.0 alone, in its own uv venv,
on the modules the TestSpec targeted with the builder's exact options; its raw output fed through the same
gates job (``mendflow.testgen.job.run_job``); line+branch coverage of the repo's suite + each set of new
tests measured the same way (coverage.py with the runner's arguments, the runner's own totals code); and
the merged repo's whole suite rerun 5 times to count failures. Not a test; prints a table.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]  # mendflow_runner and mendflow_testgen come installed

import pygit2  # noqa: E402
from build_bench import start_prefect  # noqa: E402
from mendflow_runner import coverage_report, repo_config, testing  # noqa: E402
from mendflow_testgen import edit, pyn  # noqa: E402

from tests.fixtures.repos import commit_files  # noqa: E402

SUBJECTS: dict[str, str | None] = {"calc": None, "isodate": "isodate==0.7.2", "schema": "schema==0.7.8"}
# The runner lints with the ruff mendflow ships (0.17, whose default rule set is broad) and fails B1 on any
# finding, so a library with no ruff config of its own never gets past B1 (see bench/README.md). The imports
# therefore adopt ruff with only the "real error" rules and no format check, as a team adopting mendflow would.
LIBRARY_RUFF = '[lint]\nselect = ["E9", "F63", "F7", "F82"]\n\n[format]\nexclude = ["*"]\n'
PYTHON = "/usr/bin/python3"  # the interpreter the local launcher's jobs (and so Pynguin) run on
RERUNS = 5
STAGES = ("B1", "plan", "generate", "B2", "merge", "flow", "pynguin alone", "gates on raw")


@dataclass
class Measure:
    line: float | None = None
    branch: float | None = None
    tests: int = 0
    failed: int = 0


@dataclass
class Row:
    name: str
    outcome: str = ""
    b1: Measure = field(default_factory=Measure)
    b2: Measure = field(default_factory=Measure)
    base: Measure = field(default_factory=Measure)  # our own measurement of the B1 tree
    merged: Measure = field(default_factory=Measure)  # ... of the tree mendflow merged
    pyn: Measure = field(default_factory=Measure)  # ... of the B1 tree + Pynguin's raw tests
    modules: list[str] = field(default_factory=list)
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    pyn_tests: int = 0
    pyn_xfail: int = 0
    pyn_kept: int = 0
    pyn_dropped: Counter[str] = field(default_factory=Counter)
    tidy_kept: int = 0  # the same files after the builder's own tidy step (edit.tidy_pynguin)
    tidy_dropped: Counter[str] = field(default_factory=Counter)
    rerun_failures: list[int] = field(default_factory=list)
    rerun_failing_kept: set[str] = field(default_factory=set)
    stages: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# -- subjects -------------------------------------------------------------------------------------------------
def _pip() -> list[str]:
    """pip is not in the project venv (uv made it); the system or pyenv one downloads just as well."""
    for python in (sys.executable, PYTHON):
        if subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0:
            return [python, "-m", "pip"]
    raise SystemExit("no pip found to download the sdists with")


def make_subject(name: str, work: Path) -> Path:
    """A git repo (branch main, one commit) of the example or of the library's sdist."""
    target = work / "repos" / name
    requirement = SUBJECTS[name]
    if requirement is None:
        shutil.copytree(ROOT / "examples" / "calc", target)
    else:
        dl = work / "sdist" / name
        subprocess.run([*_pip(), "download", "-q", "--no-deps", "--no-binary", ":all:", requirement, "-d", str(dl)],
                       check=True)  # fmt: skip
        with tarfile.open(next(dl.glob("*.tar.gz"))) as tar:
            tar.extractall(dl, filter="data")
        shutil.move(next(p for p in dl.iterdir() if p.is_dir()), target)
        (target / "ruff.toml").write_text(LIBRARY_RUFF)
    pygit2.init_repository(str(target), initial_head="main")
    commit_files(target, {}, f"bench import of {name}")
    return target


def export(repo: Path, sha: str, dest: Path) -> Path:
    from mendflow import snapshot

    with tarfile.open(fileobj=io.BytesIO(snapshot.archive(pygit2.Repository(str(repo)), sha))) as tar:
        tar.extractall(dest, filter="data")
    inner = [p for p in dest.iterdir()]
    return inner[0] if len(inner) == 1 and inner[0].is_dir() else dest


# -- measuring ------------------------------------------------------------------------------------------------
def make_venv(tree: Path, venv: Path) -> str:
    """The repo installed editable with pytest and coverage, like the runner's install (no marker selection)."""
    subprocess.run(["uv", "venv", "-q", "--python", PYTHON, str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run(["uv", "pip", "install", "-q", "--python", py, "-e", str(tree), "pytest", "coverage[toml]>=7.5"],
                   check=True, cwd=tree)  # fmt: skip
    return py


def _junit(path: Path) -> tuple[int, list[str]]:
    """(tests run, node-ish ids of those that failed or errored)."""
    if not path.is_file():
        return 0, ["<no junit: the run crashed>"]
    cases = ET.parse(path).getroot().iter("testcase")
    total, failed = 0, []
    for case in cases:
        total += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(f"{case.get('classname', '')}::{case.get('name', '')}")
    return total, failed


def measure(tree: Path, py: str, scratch: Path) -> Measure:
    """The whole suite under coverage.py exactly as the runner measures it (its argv, its totals)."""
    scratch.mkdir(parents=True, exist_ok=True)
    data, junit, out = scratch / ".coverage", scratch / "junit.xml", scratch / "coverage.json"
    argv = [py, "-m", "coverage", "run", "--branch"]
    if not repo_config.has_coverage_config(tree):
        argv += ["--source=.", f"--omit={testing.TEST_OMIT}"]
    env = {**os.environ, "COVERAGE_FILE": str(data)}
    env.pop("PYTHONPATH", None)
    subprocess.run([*argv, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"], cwd=tree,
                   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
    subprocess.run([py, "-m", "coverage", "json", "-q", "-o", str(out)], cwd=tree, env=env, check=False)
    total, failed = _junit(junit)
    if not out.is_file():
        return Measure(tests=total, failed=len(failed))
    report = coverage_report.to_report(json.loads(out.read_text()), tree)
    return Measure(report["line_pct"], report["branch_pct"], total, len(failed))


def reruns(tree: Path, py: str, scratch: Path, row: Row) -> None:
    """The merged repo's whole suite, RERUNS more times: failures per run and failing generated tests."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for i in range(RERUNS):
        junit = scratch / f"rerun-{i}.xml"
        subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"], cwd=tree,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
        _, failed = _junit(junit)
        row.rerun_failures.append(len(failed))
        row.rerun_failing_kept |= {f for f in failed if "_mendflow" in f}


# -- the pipeline ---------------------------------------------------------------------------------------------
def stage_times(flow_run_id: Any) -> dict[str, float]:
    """Seconds per stage from the flow run's task runs (the two build attempts are B1 then B2)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    names = {"build-attempt": "B1", "plan-tests": "plan", "build-tests": "generate", "merge": "merge"}
    times: dict[str, float] = {}
    spans = sorted((r.start_time, r.end_time, r.name) for r in runs if r.start_time and r.end_time)
    for start, end, name in spans:
        base = name.rsplit("-", 1)[0]
        stage = names.get(base)
        if stage is None:
            continue
        if stage in times and stage == "B1":
            stage = "B2"
        times[stage] = times.get(stage, 0.0) + (end - start).total_seconds()
    return times


def run_pipeline(repo: Path, row: Row) -> Any:
    from flows.pipeline import self_healing_pipeline

    start = time.perf_counter()
    state = self_healing_pipeline(repo=str(repo), branch="main", return_state=True)
    row.stages["flow"] = time.perf_counter() - start
    result = state.result()
    try:
        row.stages.update(stage_times(state.state_details.flow_run_id))
    except Exception as exc:  # timings are a nicety; the figures below still stand
        row.notes.append(f"task-run timings unavailable: {exc}")
    row.outcome = result.outcome.value
    for measured, report in ((row.b1, result.b1), (row.b2, result.b2)):
        if report is not None and report.coverage is not None:
            measured.line, measured.branch = report.coverage.line_pct, report.coverage.branch_pct
            measured.tests, measured.failed = report.tests.total, report.tests.failed
    if result.generated is not None:
        row.kept = len(result.generated.kept)
        row.dropped = Counter(d.reason.value for d in result.generated.dropped)
        row.notes += [n for n in result.generated.notes if "pynguin" in n.lower()]
    return result


# -- Pynguin alone --------------------------------------------------------------------------------------------
def pynguin_venv(work: Path) -> str:
    from mendflow.testgen.builder import PYNGUIN_VERSION

    venv = work / "pynguin-venv"
    subprocess.run(["uv", "venv", "-q", "--python", PYTHON, str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run(["uv", "pip", "install", "-q", "--python", py, f"pynguin=={PYNGUIN_VERSION}"], check=True)
    return py


def site_packages(py: str) -> str:
    found = sorted((Path(py).parent.parent / "lib").glob("python3*/site-packages"))
    return str(found[0]) if found else ""


def pynguin_alone(spec: Any, tree: Path, repo: Path, pyn_py: str, repo_py: str, out: Path) -> dict[str, str]:
    """Pynguin's raw test file per module the spec targets, at the path the builder would give it."""
    from mendflow.settings import get_settings
    from mendflow.testgen import layout
    from mendflow.testgen.builder import pynguin_options

    options = pynguin_options(get_settings())  # the builder's seed and budget
    git_tree = pygit2.Repository(str(repo)).revparse_single(spec.parent_commit_sha).peel(pygit2.Commit).tree
    taken: dict[str, str] = {}
    tests_dir = layout.tests_dir(git_tree)
    test_files = {t.path: layout.test_file_for(t.path, tests_dir, taken, git_tree) for t in spec.targets}
    files: dict[str, str] = {}
    for path, test_path in sorted(test_files.items()):
        module, root = layout.module_of(path, git_tree)
        project = tree / root
        dest = out / module
        dest.mkdir(parents=True, exist_ok=True)
        argv = pyn.argv(pyn_py, project, module, dest, options)  # the builder's exact command line
        env = {**os.environ, **pyn.environment(options, out / "pycache"),
               "PYTHONPATH": os.pathsep.join(p for p in (str(project), site_packages(repo_py)) if p)}  # fmt: skip
        proc = subprocess.Popen(argv, cwd=dest, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)  # fmt: skip
        try:
            proc.wait(timeout=options["module_timeout"])
        except subprocess.TimeoutExpired:  # the job's hard limit; what it wrote before still counts
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        produced = sorted(dest.glob("test_*.py"))
        if produced:
            files[test_path] = produced[0].read_text(encoding="utf-8")
    return files


def gate(spec: Any, repo: Path, files: dict[str, str], label: str) -> dict[str, Any]:
    """Pynguin's files through the builder's gates job, as LLM candidates go ('files' mode)."""
    from mendflow import identity
    from mendflow.keys import RepoKeys
    from mendflow.launcher import get_launcher
    from mendflow.settings import get_settings
    from mendflow.store import open_store
    from mendflow.testgen import layout
    from mendflow.testgen.builder import FLAKE_RUNS, targets_payload
    from mendflow.testgen.job import run_job

    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    git_repo = pygit2.Repository(str(repo))
    keys = RepoKeys(identity.repo_id(git_repo))
    git_tree = git_repo.revparse_single(spec.parent_commit_sha).peel(pygit2.Commit).tree
    payload = {
        "tests_dir": layout.tests_dir(git_tree),
        "targets": targets_payload(spec),
        "runs": FLAKE_RUNS,
        "mode": "files",
        "files": files,
    }
    prefix = f"{keys.commit(spec.parent_commit_sha)}/bench-pynguin-{label}/{spec.id}"
    source_key = keys.source(spec.parent_commit_sha)
    outcome = run_job(get_launcher(settings), store, settings, source_key, prefix, payload, f"bench-pynguin-{label}")
    if outcome.error:
        return {"error": outcome.error}
    return outcome.result.model_dump()


def _gated(result: dict[str, Any], row: Row, label: str) -> tuple[int, Counter[str]]:
    if "error" in result:
        row.notes.append(f"gates job on Pynguin's {label} output: {result['error']}")
    return len(result.get("kept") or []), Counter(d["reason"] for d in result.get("dropped") or [])


# -- one subject ----------------------------------------------------------------------------------------------
def run_subject(name: str, work: Path, pyn_py: str) -> Row:
    row = Row(name)
    repo = make_subject(name, work)
    base_sha = str(pygit2.Repository(str(repo)).head.target)
    result = run_pipeline(repo, row)
    base_tree = export(repo, base_sha, work / "trees" / f"{name}-base")
    base_py = make_venv(base_tree, work / "venvs" / f"{name}-base")
    row.base = measure(base_tree, base_py, work / "scratch" / f"{name}-base")
    new_sha = result.merged_sha or (result.generated.commit_sha if result.generated else "")
    if new_sha:
        merged = export(repo, new_sha, work / "trees" / f"{name}-merged")
        merged_py = make_venv(merged, work / "venvs" / f"{name}-merged")
        row.merged = measure(merged, merged_py, work / "scratch" / f"{name}-merged")
        reruns(merged, merged_py, work / "scratch" / f"{name}-merged", row)
    spec = result.spec
    if spec is None or not spec.targets:
        row.notes.append("no TestSpec targets: Pynguin alone not run")
        return row
    row.modules = sorted({t.path for t in spec.targets})
    start = time.perf_counter()
    raw = pynguin_alone(spec, base_tree, repo, pyn_py, base_py, work / "pynguin-out" / name)
    row.stages["pynguin alone"] = time.perf_counter() - start
    for text in raw.values():
        row.pyn_tests += len(edit.test_names(text))
        row.pyn_xfail += len(edit.xfail_tests(text))
    pyn_tree = export(repo, base_sha, work / "trees" / f"{name}-pynguin")
    for path, text in raw.items():
        (pyn_tree / path).parent.mkdir(parents=True, exist_ok=True)
        (pyn_tree / path).write_text(text, encoding="utf-8")
    pyn_py_repo = make_venv(pyn_tree, work / "venvs" / f"{name}-pynguin")
    row.pyn = measure(pyn_tree, pyn_py_repo, work / "scratch" / f"{name}-pynguin")
    if raw:
        start = time.perf_counter()
        gated = gate(spec, repo, raw, "raw")
        row.stages["gates on raw"] = time.perf_counter() - start
        row.pyn_kept, row.pyn_dropped = _gated(gated, row, "raw")
        tidy = {p: edit.tidy_pynguin(t) for p, t in raw.items()}
        row.tidy_kept, row.tidy_dropped = _gated(gate(spec, repo, tidy, "tidy"), row, "tidied")
    return row


# -- output ---------------------------------------------------------------------------------------------------
def pct(m: Measure) -> str:
    if m.line is None:
        return "-"
    return f"{m.line:.1f}/{m.branch:.1f}" if m.branch is not None else f"{m.line:.1f}/-"


def reasons(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


def _md(head: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join([*lines, *("| " + " | ".join(cells) + " |" for cells in body)])


def tables(rows: list[Row]) -> str:
    cov_head = ["subject", "outcome", "B1 line/br %", "B2 line/br %", "merged, re-measured", "Pynguin alone",
                "mendflow ≥ Pynguin (line)", "5 reruns: failing tests"]  # fmt: skip
    gen_head = ["subject", "generated / kept", "dropped by reason", "Pynguin alone: tests (xfail)",
                "gates on raw: kept", "raw: dropped", "gates on tidied: kept", "tidied: dropped"]  # fmt: skip
    cov, gen, times = [], [], []
    for r in rows:
        ok = "-"
        if r.merged.line is not None and r.pyn.line is not None:
            ok = "yes" if r.merged.line >= r.pyn.line else "NO"
        fails = "/".join(str(n) for n in r.rerun_failures) or "-"
        cov.append([r.name, r.outcome, pct(r.b1), pct(r.b2), pct(r.merged), pct(r.pyn), ok, fails])
        gen.append([r.name, f"{r.kept + sum(r.dropped.values())} / {r.kept}", reasons(r.dropped),
                    f"{r.pyn_tests} ({r.pyn_xfail})", str(r.pyn_kept), reasons(r.pyn_dropped), str(r.tidy_kept),
                    reasons(r.tidy_dropped)])  # fmt: skip
        times.append([r.name] + [f"{r.stages[k]:.0f}" if k in r.stages else "-" for k in STAGES])
    return "\n\n".join((_md(cov_head, cov), _md(gen_head, gen), _md(["seconds", *STAGES], times)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subjects", default=",".join(SUBJECTS))
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="mendflow-pipeline-bench-", dir="/var/tmp"))
    os.environ.update({"MENDFLOW_STATE_DIR": str(work / "state"), "MENDFLOW_RETRY_DELAYS_SEC": "[0, 0, 0]"})
    server = start_prefect(work)
    rows = []
    try:
        pyn_py = pynguin_venv(work)
        for name in args.subjects.split(","):
            rows.append(run_subject(name, work, pyn_py))
            print(f"[{time.perf_counter() - started:.0f}s] {name} done", flush=True)
    finally:
        server.terminate()
    print()
    print(f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.node()} ({os.cpu_count()} cores), "
          f"Python {platform.python_version()} (jobs: {PYTHON}); line/branch %; dropped reasons from "
          f"GeneratedTests; reruns = failing tests in each of {RERUNS} extra runs of the merged suite")  # fmt: skip
    print(tables(rows))
    for r in rows:
        if r.modules or r.notes or r.rerun_failing_kept:
            print(f"- {r.name}: modules {', '.join(r.modules) or '-'}; suite tests base {r.base.tests} "
                  f"(failed {r.base.failed}, {pct(r.base)}), merged {r.merged.tests} (failed {r.merged.failed}), "
                  f"with Pynguin's raw tests {r.pyn.tests} (failed {r.pyn.failed})")  # fmt: skip
            for n in [*r.notes, *(f"kept test failed in a rerun: {k}" for k in sorted(r.rerun_failing_kept))]:
                print(f"    {n}")
    print(f"\nbench wall time: {time.perf_counter() - started:.0f}s; work dir {work}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
