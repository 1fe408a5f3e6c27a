"""build_tests: a TestSpec → gated, minimised, secret-free tests committed on ``agt/testbuilder/<spec_id>``.

LLM mode: context (snippets radius 40, fixtures, style) → JSON answer (files or unified diff) → path/size
checks → the gates job in the sandbox → up to two repair rounds with the failures fed back. Offline mode:
Pynguin inside the sandbox job, then the same gates. Either way: secrets scan, then an idempotent commit.

A repair round edits each failing candidate file with the healer's payloads (``mendflow/testgen/repair.py``);
when no file of the first answer reached the gates there is nothing to edit, and the draft is asked for again.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pygit2

from mendflow import gitversion, identity, snapshot
from mendflow.contracts import (
    BuildStatus,
    CoverageTarget,
    DroppedTest,
    DropReason,
    GeneratedTests,
    KeptTest,
    Language,
    TestSpec,
)
from mendflow.gitops import commit_files
from mendflow.keys import RepoKeys
from mendflow.launcher import get_launcher
from mendflow.launcher.base import JobState, Launcher
from mendflow.llm import LLMClient
from mendflow.progress import OnProgress, ProgressReader
from mendflow.settings import Settings, get_settings
from mendflow.snippets import SnippetSource
from mendflow.source import publish_snapshot
from mendflow.store import open_store
from mendflow.store.base import ArtefactStore
from mendflow.testgen import layout
from mendflow.testgen.accept import Accepted, accept
from mendflow.testgen.commit import branch_for
from mendflow.testgen.context import RepoContext, gather
from mendflow.testgen.job import JobOutcome, expected_total, run_job
from mendflow.testgen.llm_gen import (
    STAGE,
    TestDraft,
    materialise,
    repair_prompt,
    system_prompt,
    user_prompt,
)
from mendflow.testgen.polyglot import offline_note
from mendflow.testgen.repair import Repairer, failing_files
from mendflow.testgen.secrets import scan

log = logging.getLogger(__name__)
MAX_REPAIR_ROUNDS = 2
FLAKE_RUNS = 5
PYNGUIN_VERSION = "0.48.0"  # Python >=3.10,<3.16 (0.20-0.42 need exactly 3.10)


class _Run:
    """State of one build_tests call."""

    def __init__(
        self,
        spec: TestSpec,
        repo: pygit2.Repository,
        settings: Settings,
        store: ArtefactStore,
        launcher: Launcher,
        repo_id: str | None = None,
        on_progress: OnProgress | None = None,
    ) -> None:
        self.spec, self.repo, self.settings, self.store, self.launcher = spec, repo, settings, store, launcher
        self.on_progress = on_progress
        self.artefacts = RepoKeys(repo_id or identity.repo_id(repo))
        self.asked: set[str] = set()  # the only paths whose returned text may be committed
        self.tree = repo.revparse_single(spec.parent_commit_sha).peel(pygit2.Commit).tree
        self.tests_dir = layout.tests_dir(self.tree)
        self.dropped: list[DroppedTest] = []
        self.notes: list[str] = []
        self.source_key = self._snapshot()
        self.version = gitversion.version_of(repo, spec.parent_commit_sha)  # the snapshot's, for every round
        taken: dict[str, str] = {}
        self.test_files = {t.path: layout.test_file_for(t.path, self.tests_dir, taken, self.tree) for t in spec.targets}

    def _snapshot(self) -> str:
        key = self.artefacts.source(self.spec.parent_commit_sha)  # the build stage's key: shared
        if not self.store.exists(key):
            publish_snapshot(self.repo, self.spec.parent_commit_sha, self.store, key, self.settings)
        return key

    def targets_payload(self) -> list[dict[str, Any]]:
        return targets_payload(self.spec)

    def gate(self, round_no: int, candidates: dict[str, Any]) -> JobOutcome:
        prefix = f"{self.artefacts.testgen(self.spec.parent_commit_sha, self.spec.id)}/{round_no}"
        self.asked |= set(candidates.get("files") or {})
        self.asked |= {m["test_path"] for m in (candidates.get("pynguin") or {}).get("modules", [])}
        payload = {
            "tests_dir": self.tests_dir,
            "targets": self.targets_payload(),
            "runs": FLAKE_RUNS,
            **candidates,
        }
        return run_job(
            self.launcher,
            self.store,
            self.settings,
            self.source_key,
            prefix,
            payload,
            f"testbuilder-{self.spec.id[-8:]}-{round_no}",
            ProgressReader(expected_total(payload), self.on_progress) if self.on_progress else None,
            cache_scope=self.spec.repo,
            version=self.version,
        )

    def record_drops(self, outcome: JobOutcome, round_no: int, final: bool) -> None:
        for d in outcome.result.dropped:
            self.dropped.append(d if final else d.model_copy(update={"detail": f"round {round_no}: {d.detail}"}))
        self.notes += outcome.result.notes

    def reject(self, rejections: list[layout.Rejection], round_no: int) -> None:
        for r in rejections:
            self.dropped.append(DroppedTest(node_id=r.path, reason=r.reason, detail=f"round {round_no}: {r.detail}"))


class _Forward:
    """``on_progress`` that never moves back: an LLM repair round gates its files again, from none done."""

    def __init__(self, on_progress: OnProgress) -> None:
        self.on_progress = on_progress
        self.fraction = -1.0

    def __call__(self, done: int, total: int) -> None:
        fraction = done / total if total else 1.0
        if fraction >= self.fraction:
            self.fraction = fraction
            self.on_progress(done, total)


def targets_payload(spec: TestSpec) -> list[dict[str, Any]]:
    """What the gates credit a test with: any line or branch the build missed in a targeted file."""
    return [
        t.model_dump(include={"path", "symbol", "start_line", "end_line", "missing_lines", "missing_branches"})
        for t in spec.targets
    ]


def pynguin_options(settings: Settings) -> dict[str, Any]:
    """Pynguin's budget, seed and parallelism, the same for every module (the bench runs Pynguin alone with these)."""
    p = settings.pynguin
    return {
        "version": PYNGUIN_VERSION,
        "search_time": p.search_time_sec,
        "module_timeout": p.module_limit_sec,
        "seed": p.seed,
        "workers": max(1, int(settings.sandbox.cpu_limit)),  # modules searched at once: one core each
    }


def _kept(outcome: JobOutcome) -> list[KeptTest]:
    return list(outcome.result.kept)


def _llm_rounds(run: _Run, llm: LLMClient, ctx: RepoContext) -> tuple[JobOutcome | None, int]:
    suggested = sorted(set(run.test_files.values()))
    messages = [
        {"role": "system", "content": system_prompt(run.tests_dir, suggested)},
        {"role": "user", "content": user_prompt(run.spec, ctx)},
    ]
    round_no = 0
    draft = llm.complete_json(STAGE, messages, TestDraft)
    files, rejections = materialise(draft, run.tree, run.tests_dir)
    run.reject(rejections, round_no)
    while not files:  # nothing reached the gates, so nothing to edit: ask for the draft again
        if round_no == MAX_REPAIR_ROUNDS:
            return None, round_no
        feedback = "\n".join(f"{r.path}: {r.reason.value}: {r.detail}" for r in rejections) or "no files"
        messages += [
            {"role": "assistant", "content": draft.model_dump_json()},
            {"role": "user", "content": repair_prompt(feedback)},
        ]
        round_no += 1
        draft = llm.complete_json(STAGE, messages, TestDraft)
        files, rejections = materialise(draft, run.tree, run.tests_dir)
        run.reject(rejections, round_no)
    code = "\n\n".join(f"# {ref}\n{text}" for ref, text in ctx.snippets.items())
    repairer = Repairer(llm, code, run.tests_dir, run.tree, run.notes)
    gated: list[tuple[int, JobOutcome]] = []
    while True:
        outcome = run.gate(round_no, {"mode": "files", "files": files})
        if outcome.error:
            run.notes.append(f"round {round_no}: {outcome.error}")
            if not gated:
                return outcome, round_no
            break
        gated.append((round_no, outcome))
        failing = failing_files(outcome, files)
        if not failing or round_no == MAX_REPAIR_ROUNDS:
            break
        round_no += 1
        repaired = repairer.repair(round_no, files, failing, outcome)
        if repaired == files:
            break
        files = repaired
    return _best(run, gated), round_no


def _best(run: _Run, gated: list[tuple[int, JobOutcome]]) -> JobOutcome:
    """The gated round keeping the most tests (the latest of equals): a repair that broke a file loses nothing."""
    best_round, best = max(gated, key=lambda g: (len(_kept(g[1])), g[0]))
    for round_no, outcome in gated:
        run.record_drops(outcome, round_no, outcome is best)
    last_round = gated[-1][0]
    if best_round != last_round:
        run.notes.append(f"round {last_round} kept fewer tests than round {best_round}: round {best_round} is used")
    return best


def search_time(settings: Settings, targets: list[CoverageTarget], path: str) -> int:
    """Pynguin's search for one module, grown with its gap: a schema-sized gap (32 lines and branches) reached
    68 % branch coverage in 20 s of search and 80 % in 60 s, where a small module gains nothing from longer."""
    p = settings.pynguin
    lines = {n for t in targets if t.path == path for n in t.missing_lines}
    branches = {b for t in targets if t.path == path for b in t.missing_branches}
    gap = len(lines) + len(branches)
    return int(min(p.search_time_max_sec, max(p.search_time_sec, p.search_sec_per_gap * gap)))


def _pynguin(run: _Run) -> JobOutcome:
    modules = []
    for path, test_path in sorted(run.test_files.items()):
        module, root = layout.module_of(path, run.tree)
        seconds = search_time(run.settings, run.spec.targets, path)
        modules.append({"module": module, "project_path": root, "test_path": test_path, "search_time": seconds})
    candidates = {
        "mode": "pynguin",
        "pynguin": {**pynguin_options(run.settings), "modules": modules},
    }
    outcome = run.gate(0, candidates)
    if not outcome.error:
        run.record_drops(outcome, 0, True)
    return outcome


def _message(spec: TestSpec, kept: list[KeptTest]) -> str:
    gained: dict[str, tuple[int, int]] = {}
    for k in kept:
        lines_, branches = gained.get(k.target, (0, 0))
        gained[k.target] = (lines_ + k.lines_gained, branches + k.branches_gained)
    lines = [
        f"tests: add generated tests for {spec.id}",
        "",
        f"Spec: {spec.id}",
        f"Parent: {spec.parent_commit_sha}",
        "Targets and coverage gained (lines and branches the build left uncovered, now run):",
    ]
    lines += [f"- {ref}: +{n} line(s), +{b} branch(es)" for ref, (n, b) in sorted(gained.items())]
    return "\n".join(lines) + "\n"


def build_tests(
    spec: TestSpec,
    repo_path: str | Path,
    settings: Settings | None = None,
    index: SnippetSource | None = None,
    *,
    llm: LLMClient | None = None,
    use_llm: bool | None = None,
    launcher: Launcher | None = None,
    store: ArtefactStore | None = None,
    repo_id: str | None = None,
    on_progress: OnProgress | None = None,
    language: Language = Language.PYTHON,
) -> GeneratedTests:
    """Generate, gate, scan and commit tests for ``spec``; GeneratedTests says what was kept and why not."""
    if language is not Language.PYTHON:
        return not_generated(spec, language)
    settings = settings or get_settings()
    repo = snapshot.resolve_repo(str(repo_path), settings)
    store = store or open_store(settings.resolved_store_url(), settings)
    if use_llm is False:
        llm = None
    elif llm is None and settings.llm.enabled:
        llm = LLMClient(settings.llm)
    on_progress = _Forward(on_progress) if on_progress else None
    run = _Run(spec, repo, settings, store, launcher or get_launcher(settings), repo_id, on_progress)
    branch = branch_for(spec.id)
    result = GeneratedTests(
        spec_id=spec.id,
        branch_name=branch,
        commit_sha="",
        precheck=BuildStatus.FAILED,
        generator="llm" if llm is not None else "pynguin",
    )
    if not spec.targets:
        return result.model_copy(update={"notes": ["the TestSpec has no targets: nothing to generate"]})
    before = llm.ledger.by_stage.get(STAGE, 0) if llm else 0
    rounds, modules = 0, len(run.test_files)
    if on_progress:
        on_progress(0, modules)
    if llm is not None:
        outcome, rounds = _llm_rounds(run, llm, gather(repo, spec, run.tests_dir, index))
    else:
        outcome = _pynguin(run)
    if on_progress:
        on_progress(modules, modules)
    tokens = (llm.ledger.by_stage.get(STAGE, 0) - before) if llm else 0
    result = result.model_copy(update={"repair_rounds": rounds, "llm_tokens": tokens})
    return _finish(run, outcome, result, spec, repo, branch)


def not_generated(spec: TestSpec, language: Language) -> GeneratedTests:
    """The builder's answer offline for a language with no offline generator (every one but Python's Pynguin):
    said plainly; the build, regression and healing stages go on without it."""
    return GeneratedTests(
        spec_id=spec.id,
        branch_name=branch_for(spec.id),
        precheck=BuildStatus.FAILED,
        generator="none",
        notes=[offline_note(language)],
    )


def _finish(
    run: _Run,
    outcome: JobOutcome | None,
    result: GeneratedTests,
    spec: TestSpec,
    repo: pygit2.Repository,
    branch: str,
) -> GeneratedTests:
    if outcome is not None and outcome.error:
        status = (
            BuildStatus.ERRORED
            if outcome.state is not JobState.SUCCEEDED or "dependencies" not in outcome.error
            else BuildStatus.FAILED
        )
        return result.model_copy(
            update={"precheck": status, "notes": [*run.notes, outcome.error], "dropped": run.dropped}
        )
    accepted = accept(outcome.result.files, _kept(outcome), run.asked, run.tests_dir) if outcome else Accepted()
    kept, files = accepted.kept, accepted.files
    run.dropped += accepted.refused
    update: dict[str, Any] = {"dropped": run.dropped, "notes": run.notes}
    if not kept or not files:
        update["notes"] = [*run.notes, "no generated test passed the gates; nothing committed"]
        return result.model_copy(update=update)
    findings = scan(files)
    if findings:
        blocked = [
            DroppedTest(node_id=k.node_id, reason=DropReason.SECRET, detail="its file holds a secret")
            for k in kept
            if any(k.node_id.startswith(f.path + "::") for f in findings)
        ]
        update["dropped"] = [*run.dropped, *blocked]
        update["notes"] = [*run.notes, *(f"secret found, commit blocked: {f}" for f in findings)]
        update["files"] = sorted(files)
        return result.model_copy(update=update)
    sha = commit_files(repo, spec.parent_commit_sha, branch, files, _message(spec, kept))
    update.update(precheck=BuildStatus.PASSED, commit_sha=sha, kept=kept, files=sorted(files))
    return result.model_copy(update=update)
