"""Benchmark (issue 15): ``mendflow heal`` on the breakage corpus, per category, offline and with an LLM.

    uv run --frozen python -m bench.heal_corpus                       # the corpus, once (a few minutes)
    uv run --frozen python bench/heal_bench.py [--cases /var/tmp/mendflow-heal-corpus/cases.json]
        [--llm URL | --scripted-model] [--categories rename,move] [--libraries toolz] [--limit N] [--timeout 900]
        [--json]
    uv run --frozen python bench/heal_bench.py --dry-run               # check the corpus, print the skeleton

For each case it runs ``mendflow heal <copy of the case repo> --commit <sha> --json`` (exit 0 healed, 6 awaiting
approval, 1 not healed) with a timeout and records the outcome, the wall time, the size of ``HealResult.diff``,
the heal methods used, the sizes of the successful ``update`` attempts' diffs (``HealAttempt.diff`` in the
checklist history) and the tokens of every attempt in the checklist plus those of a source-fix proposal made
(a proposal that came to nothing reports no tokens; with ``--scripted-model`` the bench also counts the tokens
the model served during each case, shown as "served"). Each mode gets a fresh state directory (so a fresh
knowledge base) and a fresh copy of every case repo; one Prefect server is started for the run unless
``PREFECT_API_URL`` is set.

Diff sizes are **changed lines**: a replaced line counts once. In each run of removed and added lines between
context lines (one per hunk unless a hunk holds several separate changes) the size is max(removed, added), so
renaming a name on one line is 1, not 2: ``mendflow.edits.diff_size``, the count ``HealAttempt.diff_lines`` holds.

Modes: ``offline`` (no LLM settings at all) and ``llm`` (``MENDFLOW_LLM__BASE_URL``): with ``--llm URL`` any
OpenAI-compatible endpoint (``--llm-model`` and ``--llm-key`` optional); with ``--scripted-model`` the scripted
model of ``bench/heal_model.py`` on a free loopback port, labelled ``llm (scripted model)``. That model is no
language model: it rewrites the shown test by text replacement from the commit's described change (renames,
moves, parameter renames) and answers the payload asked for, so it measures mendflow's LLM path (payload
validation, escalation, the no-weakening gate, re-runs, tokens), not a model's quality.

Per category and mode: heal rate (healed or awaiting approval), **false heals** (a ``behaviour`` case healed or
awaiting approval: must be 0), behaviour changes reported as regressions, median time to green, median diff of
the healed cases, median diff of the successful ``update`` attempts (one payload each, over all attempts in the
category, not per case), tokens. Targets (issue 15): offline ≥ 70 % of rename, move and signature cases healed;
median ``update`` diff ≤ 3 lines; every behaviour change reported as a regression.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from heal_corpus import CATEGORIES, DEFAULT_OUT, Case, is_test_path, load_cases  # noqa: E402

from mendflow.edits import diff_size  # noqa: E402

REFACTORINGS = ("rename", "move", "reexport", "param_rename", "signature", "return_type")
TARGET_CATEGORIES = ("rename", "move", "signature")  # offline heal rate ≥ 70 % on these
TARGET_HEAL_RATE = 0.70
TARGET_UPDATE_DIFF = 3
REPAIRED = ("healed", "awaiting_approval")
EXIT_OUTCOMES = {0: "healed", 6: "awaiting_approval", 1: "not_healed"}
SCRIPTED_LABEL = "llm (scripted model)"


@dataclass
class Row:
    case: str
    library: str
    category: str
    mode: str
    outcome: str  # a HealOutcome value, or nothing_to_heal / not_healable / timeout / error / dry_run
    exit_code: int | None = None
    seconds: float = 0.0
    diff_lines: int = 0
    methods: list[str] = field(default_factory=list)  # methods of the successful attempts
    update_diffs: list[int] = field(default_factory=list)  # changed lines of each successful update attempt
    tokens: int = 0  # the checklist's attempts and a proposal made, as HealResult reports them
    served_tokens: int | None = None  # what the scripted model answered during this case (--scripted-model)
    regression_reported: bool = False  # a checklist entry ended as 'regression'
    error: str = ""

    @property
    def repaired(self) -> bool:
        return self.outcome in REPAIRED

    @property
    def false_heal(self) -> bool:
        return self.category == "behaviour" and self.repaired


# -- the corpus -----------------------------------------------------------------------------------------------
def git(repo: str | Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def check_case(case: Case) -> list[str]:
    """Problems with one case as the manifest describes it ([] = fine)."""
    repo = Path(case.repo)
    if not (repo / ".git").exists():
        return [f"{case.id}: no repo at {repo}"]
    problems = []
    try:
        parent = git(repo, "rev-parse", f"{case.commit_sha}^")
        changed = git(repo, "diff", "--name-only", case.parent_sha, case.commit_sha).splitlines()
    except subprocess.CalledProcessError as exc:
        return [f"{case.id}: {exc.stderr.strip()}"]
    if git(repo, "rev-parse", "HEAD") != case.commit_sha:
        problems.append(f"{case.id}: HEAD is not the case commit")
    if parent != case.parent_sha:
        problems.append(f"{case.id}: the case commit's parent is {parent[:10]}, not {case.parent_sha[:10]}")
    problems += [f"{case.id}: the case changes a test file, {p}" for p in changed if is_test_path(p)]
    if not case.failing_tests:
        problems.append(f"{case.id}: no failing test recorded")
    if case.category not in CATEGORIES:
        problems.append(f"{case.id}: unknown category {case.category}")
    return problems


def select(cases: Iterable[Case], categories: set[str], libraries: set[str], limit: int) -> list[Case]:
    chosen = [
        c for c in cases if (not categories or c.category in categories) and (not libraries or c.library in libraries)
    ]
    if limit:
        per: dict[str, int] = {}
        kept = []
        for c in chosen:
            per[c.category] = per.get(c.category, 0) + 1
            if per[c.category] <= limit:
                kept.append(c)
        chosen = kept
    return chosen


# -- running mendflow heal ------------------------------------------------------------------------------------
def mode_env(mode: str, state: Path, llm: str, model: str, key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MENDFLOW_LLM__") and k != "OPENAI_API_KEY"}
    env["MENDFLOW_STATE_DIR"] = str(state)
    if mode == "llm":
        env["MENDFLOW_LLM__BASE_URL"] = llm
        env["MENDFLOW_LLM__API_KEY"] = key
        if model:
            env["MENDFLOW_LLM__MODEL"] = model
    return env


def heal_case(case: Case, mode: str, work: Path, env: dict[str, str], timeout: float) -> Row:
    """``mendflow heal`` on a fresh copy of the case repo, read back into a Row."""
    repo = work / mode / case.id
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(case.repo, repo, symlinks=True)
    argv = [sys.executable, "-m", "mendflow.cli.__main__", "heal", str(repo), "--commit", case.commit_sha, "--json"]
    row = Row(case.id, case.library, case.category, mode, "error")
    start = time.perf_counter()
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        row.outcome, row.seconds = "timeout", time.perf_counter() - start
        return row
    row.seconds, row.exit_code = time.perf_counter() - start, proc.returncode
    read_result(row, proc.stdout, proc.stderr)
    return row


def read_result(row: Row, stdout: str, stderr: str) -> None:
    """Fill ``row`` from the CLI's JSON: a HealResult, or a BuildReport when there was nothing to heal."""
    from mendflow.contracts import BuildReport, BuildStatus, CheckStatus, HealResult

    try:
        data = json.loads(stdout[stdout.index("{") :])
    except ValueError:
        row.error = (stderr.strip().splitlines() or ["no JSON on stdout"])[-1][:300]
        return
    if "outcome" not in data:
        report = BuildReport.model_validate(data)
        row.outcome = "nothing_to_heal" if report.status is BuildStatus.PASSED else "not_healable"
        return
    result = HealResult.model_validate(data)
    row.outcome = result.outcome.value
    row.diff_lines = diff_size(result.diff)
    attempts = [a for e in result.checklist.entries for a in e.history]
    row.tokens = sum(a.tokens for a in attempts) + (result.proposal.tokens if result.proposal else 0)
    row.methods = sorted({a.method.value for a in attempts if a.success})
    row.update_diffs = [diff_size(a.diff) for a in attempts if a.success and a.method.value == "update"]
    row.regression_reported = any(e.status is CheckStatus.REGRESSION for e in result.checklist.entries)
    expected = EXIT_OUTCOMES.get(row.exit_code or 0)
    if expected and expected != row.outcome and not (expected == "not_healed" and row.outcome == "rejected"):
        row.error = f"exit {row.exit_code} but outcome {row.outcome}"


def start_server(work: Path) -> subprocess.Popen[bytes] | None:
    """One Prefect server for the whole run (the CLI would otherwise start a temporary one per case)."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    from build_bench import start_prefect

    return start_prefect(work)


def run_mode(
    mode: str, cases: Sequence[Case], work: Path, env: dict[str, str], timeout: float,
    served: Callable[[], int] | None = None,
) -> list[Row]:  # fmt: skip
    """Every case in ``mode``; ``served`` reads the scripted model's token counter (cases run one at a time)."""
    rows = []
    for i, case in enumerate(cases, 1):
        before = served() if served else 0
        row = heal_case(case, mode, work, env, timeout)
        if served:
            row.served_tokens = served() - before
        rows.append(row)
        flag = "  FALSE HEAL" if row.false_heal else ""
        print(f"[{mode} {i}/{len(cases)}] {case.id}: {row.outcome} in {row.seconds:.1f}s{flag} {row.error}",
              file=sys.stderr, flush=True)  # fmt: skip
    return rows


# -- the tables -----------------------------------------------------------------------------------------------
def median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.1f}" if values else "—"


def category_cells(category: str, rows: list[Row], dry: bool) -> list[str]:
    n = len(rows)
    if dry:
        return [category, str(n), *["—"] * 8]
    repaired = [r for r in rows if r.repaired]
    updates = [d for r in rows for d in r.update_diffs]
    behaviour = category == "behaviour"
    return [
        category,
        str(n),
        f"{len(repaired)}/{n} = {len(repaired) / n:.0%}" if n else "—",
        str(sum(r.false_heal for r in rows)) if behaviour else "",
        f"{sum(r.regression_reported for r in rows)}/{n}" if behaviour else "",
        median([r.seconds for r in repaired]),
        median([r.diff_lines for r in repaired]),
        median(updates),
        tokens_cell(rows),
        str(sum(r.outcome in ("timeout", "error", "nothing_to_heal", "not_healable") for r in rows)),
    ]


def tokens_cell(rows: list[Row]) -> str:
    said = str(sum(r.tokens for r in rows))
    served = [r.served_tokens for r in rows if r.served_tokens is not None]
    return f"{said} (served {sum(served)})" if served else said


HEAD = ["category", "cases", "heal rate", "false heals", "regression reported", "median s to green",
        "median diff", "median update diff", "tokens", "errors/timeouts"]  # fmt: skip


def table(mode: str, rows: list[Row], dry: bool = False, label: str = "") -> str:
    run = [c for c in CATEGORIES if any(r.category == c for r in rows)]  # a --categories run shows only its own
    body = [category_cells(c, [r for r in rows if r.category == c], dry) for c in run]
    lines = [f"## {label or mode}", "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    if not dry:
        lines += ["", *targets(mode, rows)]
    return "\n".join(lines)


def targets(mode: str, rows: list[Row]) -> list[str]:
    out = []
    if mode == "offline":
        for c in TARGET_CATEGORIES:
            sub = [r for r in rows if r.category == c]
            if not sub:
                out.append(f"- offline heal rate, {c}: no cases run")
                continue
            rate = sum(r.repaired for r in sub) / len(sub)
            out.append(f"- offline heal rate, {c}: {rate:.0%} (target ≥ {TARGET_HEAL_RATE:.0%}) "
                       f"{'✓' if rate >= TARGET_HEAL_RATE else '✗'}")  # fmt: skip
    update = [d for r in rows for d in r.update_diffs]
    ok = bool(update) and statistics.median(update) <= TARGET_UPDATE_DIFF
    out.append(f"- median update diff: {median(update)} changed lines over {len(update)} successful update "
               f"attempts (target ≤ {TARGET_UPDATE_DIFF}) {'✓' if ok else '✗'}")  # fmt: skip
    behaviour = [r for r in rows if r.category == "behaviour"]
    if not behaviour:
        return [*out, "- false heals and behaviour changes reported: no behaviour cases run"]
    false = sum(r.false_heal for r in behaviour)
    out.append(f"- false heals: {false} (target 0) {'✓' if not false else '✗'}")
    reported = sum(r.regression_reported for r in behaviour)
    out.append(f"- behaviour changes reported as regressions: {reported}/{len(behaviour)} "
               f"{'✓' if reported == len(behaviour) else '✗'}")  # fmt: skip
    return out


def dry_rows(cases: Sequence[Case], modes: Sequence[str]) -> list[Row]:
    return [Row(c.id, c.library, c.category, m, "dry_run") for m in modes for c in cases]


# -- main -----------------------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=DEFAULT_OUT / "cases.json", help="heal_corpus's manifest")
    parser.add_argument("--llm", default="", help="an OpenAI-compatible base URL: adds the 'llm' mode")
    parser.add_argument(
        "--scripted-model",
        action="store_true",
        help="adds the 'llm' mode against bench/heal_model.py's scripted model (no real model)",
    )
    parser.add_argument("--llm-model", default="")
    parser.add_argument("--llm-key", default="bench")
    parser.add_argument("--no-offline", action="store_true", help="only the llm mode")
    parser.add_argument("--categories", default="", help="comma-separated; default: all")
    parser.add_argument("--libraries", default="", help="comma-separated; default: all")
    parser.add_argument("--limit", type=int, default=0, help="at most N cases per category")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per heal")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of the tables")
    parser.add_argument("--dry-run", action="store_true", help="check the corpus and print the table skeleton")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (healed repos, state)")
    parser.set_defaults(model_summary="")  # filled by run_scripted
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.cases.exists():
        raise SystemExit(f"no manifest at {args.cases}: run `python -m bench.heal_corpus` first")
    split = lambda s: {x for x in s.split(",") if x}  # noqa: E731
    cases = select(load_cases(args.cases), split(args.categories), split(args.libraries), args.limit)
    if args.llm and args.scripted_model:
        raise SystemExit("--llm and --scripted-model are exclusive")
    modes = ([] if args.no_offline else ["offline"]) + (["llm"] if args.llm or args.scripted_model else [])
    problems = [p for c in cases for p in check_case(c)]
    for p in problems:
        print(f"corpus: {p}", file=sys.stderr)
    rows = dry_rows(cases, modes) if args.dry_run else run_all(args, cases, modes)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    else:
        print(f"{len(cases)} cases from {args.cases}" + (f", {len(problems)} corpus problems" if problems else ""))
        for mode in modes:
            label = SCRIPTED_LABEL if mode == "llm" and args.scripted_model else mode
            print("\n" + table(mode, [r for r in rows if r.mode == mode], args.dry_run, label))
            if label == SCRIPTED_LABEL and args.model_summary:
                print(f"- the scripted model (bench/heal_model.py) answered: {args.model_summary}")
    return 1 if problems else 0


def run_all(args: argparse.Namespace, cases: Sequence[Case], modes: Sequence[str]) -> list[Row]:
    work = Path(tempfile.mkdtemp(prefix="mendflow-heal-bench-", dir="/var/tmp"))
    server = start_server(work)
    rows: list[Row] = []
    try:
        for mode in modes:
            if mode == "llm" and args.scripted_model:
                rows += run_scripted(args, cases, work)
                continue
            env = mode_env(mode, work / mode / "state", args.llm, args.llm_model, args.llm_key)
            rows += run_mode(mode, cases, work, env, args.timeout)
    finally:
        if server:
            os.killpg(server.pid, 15)
            server.wait(timeout=30)
        if args.keep:
            print(f"work directory kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return rows


def run_scripted(args: argparse.Namespace, cases: Sequence[Case], work: Path) -> list[Row]:
    """The llm mode against bench/heal_model.py's scripted model, served from this process on loopback."""
    from heal_model import MODEL, Server

    with Server() as model:
        env = mode_env("llm", work / "llm" / "state", model.url, args.llm_model or MODEL, args.llm_key)
        env["NO_PROXY"] = ",".join(x for x in (env.get("NO_PROXY", ""), "127.0.0.1", "localhost") if x)
        rows = run_mode("llm", cases, work, env, args.timeout, lambda: model.model.tokens)
        args.model_summary = model.model.summary()
    return rows


if __name__ == "__main__":
    sys.exit(main())
