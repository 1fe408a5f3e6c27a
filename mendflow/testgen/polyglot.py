"""The LLM test builder for the languages other than Python (Go, TypeScript/JavaScript, Rust, Java).

The trusted side decides, before the LLM is asked, the one new test file each target's tests go in, where that
ecosystem's runner finds it (``test_path``); a file the answer names anywhere else is refused. The gates are the
language's own CI runner, run by the caller (``GateRun``: the candidates committed on a scratch branch, the runner
with ``--select`` of the new tests, N runs in one job): it compiles, the selected tests are collected, they pass
every run, and they run lines the build (B1) left uncovered in the targeted files. One repair round feeds the
gates' words back. Only the files asked for, size-capped, that passed, are committed; a job's report never widens that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import pygit2

from mendflow.contracts import (
    BuildReport,
    BuildStatus,
    DroppedTest,
    DropReason,
    FailureKind,
    GeneratedTests,
    KeptTest,
    Language,
    TestSpec,
)
from mendflow.gitops import commit_files
from mendflow.llm import LLMClient
from mendflow.testgen import junit
from mendflow.testgen.commit import branch_for
from mendflow.testgen.layout import MAX_FILE_BYTES, MAX_FILE_LINES, READ_LIMIT, Rejection, _is_link, blob_text
from mendflow.testgen.llm_gen import STAGE, TestDraft
from mendflow.testgen.secrets import scan

MAX_REPAIR_ROUNDS = 1
FLAKE_RUNS = 5
_CODE_CHARS = 24_000
SUPPORTED = (Language.GO, Language.TYPESCRIPT, Language.RUST, Language.JAVA)

# A gates run: (candidate files, the ids to select, how many runs) → the runner's report of that selection, which
# stops at the first run that does not pass.
GateRun = Callable[[dict[str, str], list[str], int], BuildReport]


# Why a language has no offline generator here, where there is more to say than that none exists.
_NO_OFFLINE_WHY = {
    Language.JAVA: "EvoSuite needs Java 8 to 11 and reads no Java 17 class file, Randoop is not on Maven Central",
}


def offline_note(language: Language) -> str:
    note = f"no offline generator for {language}: the test builder writes {language} tests with an LLM only"
    why = _NO_OFFLINE_WHY.get(language)
    return f"{note}; {why}" if why else note


# ---------------------------------------------------------------- where tests go


def _paths(tree: pygit2.Tree, prefix: str = "") -> list[str]:
    out: list[str] = []
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            if entry.name not in ("node_modules", "target", "vendor", ".git", "dist", "build"):
                out += _paths(entry.peel(pygit2.Tree), f"{path}/")
        else:
            out.append(path)
    return out


_JS_TEST = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")


def existing_tests(language: Language, files: list[str]) -> list[str]:
    """The repository's own test files, by its ecosystem's naming."""
    if language is Language.GO:
        return [f for f in files if f.endswith("_test.go")]
    if language is Language.TYPESCRIPT:
        return [f for f in files if _JS_TEST.search(f) or "/__tests__/" in f"/{f}"]
    if language is Language.RUST:
        return [f for f in files if f.endswith(".rs") and f.split("/")[-2:-1] == ["tests"]]
    if language is Language.JAVA:
        return [f for f in files if "src/test/java/" in f and f.endswith(".java")]
    return []


def test_path(language: Language, target: str, tree: pygit2.Tree, files: list[str] | None = None) -> str:
    """The one new file the tests of ``target`` go in, where the runner collects it, never an existing file.

    Go: ``foo_mendflow_test.go`` beside ``foo.go`` (the same package: unexported code is testable). TypeScript/
    JavaScript: ``foo.mendflow.test.ts`` in the directory the repository keeps its tests (``tests/``, ``test/``,
    ``__tests__/``, mirroring the source's path below its top directory), else beside the source. Rust: an
    integration test ``tests/<stem>_mendflow.rs`` (the crate's public API only: a file under ``tests/`` is a
    target of its own, so a new file never edits source). Java: ``<module>/src/test/java/<package>/
    FooMendflowTest.java`` (the module of its ``src/main/java``, the package of the source's own ``package`` clause);
    a class name the repository already uses gets a number (``FooMendflow2Test``).
    """
    files = files if files is not None else _paths(tree)
    p = PurePosixPath(target)
    base = _base_path(language, p, files, tree)
    name, n = base, 1
    taken = {f.lower() for f in files}  # a case-insensitive file system cannot hold both either
    while name.lower() in taken:
        n += 1
        name = _numbered(base, n)
    return name


def _numbered(path: str, n: int) -> str:
    """``path`` with ``n`` after the mendflow in its file name (never in a directory's)."""
    where, _, name = path.rpartition("/")
    for word in ("mendflow", "Mendflow"):
        if word in name:
            name = name.replace(word, f"{word}{n}", 1)
            break
    return f"{where}/{name}" if where else name


def _base_path(language: Language, p: PurePosixPath, files: list[str], tree: pygit2.Tree) -> str:
    stem, parent = p.stem, p.parent.as_posix()
    here = "" if parent == "." else f"{parent}/"
    if language is Language.GO:
        return f"{here}{stem}_mendflow_test.go"
    if language is Language.TYPESCRIPT:
        ext = p.suffix if p.suffix in (".ts", ".tsx", ".js", ".mjs", ".cjs", ".mts", ".cts", ".jsx") else ".ts"
        tests = existing_tests(language, files)
        beside = [t for t in tests if PurePosixPath(t).parent.as_posix() == parent]
        if tests and not beside:
            top = PurePosixPath(tests[0]).parts[0]
            if top in ("test", "tests", "__tests__"):
                rest = "/".join(p.parts[1:-1])
                return f"{top}/{rest + '/' if rest else ''}{stem}.mendflow.test{ext}"
        return f"{here}{stem}.mendflow.test{ext}"
    if language is Language.RUST:
        crate = _crate_root(p, files)
        return f"{crate}tests/{stem}_mendflow.rs"
    if language is Language.JAVA:
        return junit.test_path(p, files, tree)
    raise ValueError(f"no test layout for {language}")


def _crate_root(p: PurePosixPath, files: list[str]) -> str:
    """The directory of the nearest Cargo.toml above ``p`` ('' or 'dir/')."""
    for parent in p.parents:
        where = "" if parent.as_posix() == "." else f"{parent.as_posix()}/"
        if f"{where}Cargo.toml" in files:
            return where
    return ""


def check(
    path: str, content: str, allowed: set[str], tree: pygit2.Tree, language: Language | None = None
) -> Rejection | None:
    """Refuse a file that is not exactly one the trusted side chose (or lies behind a symlink), or oversize; a Java
    file whose package clause or class name does not match its path (the runner would never find its tests)."""
    if path not in allowed:
        where = ", ".join(sorted(allowed))
        return Rejection(path, DropReason.OUTSIDE_TESTS_DIR, f"tests may only be written to {where}")
    link = _is_link(tree, PurePosixPath(path).parts)
    if link:
        return Rejection(path, DropReason.OUTSIDE_TESTS_DIR, f"{link} is a symlink in the repository")
    size = len(content.encode())
    if size > MAX_FILE_BYTES or content.count("\n") > MAX_FILE_LINES:
        return Rejection(path, DropReason.OVERSIZE, f"{size} bytes / {content.count(chr(10))} lines is too large")
    if language is Language.JAVA:
        wrong = junit.misplaced(path, content)
        if wrong:
            return Rejection(path, DropReason.NOT_COLLECTED, wrong)
    return None


# ---------------------------------------------------------------- the ecosystem's test framework and ids


def framework(language: Language, tree: pygit2.Tree, files: list[str], target: str = "") -> str:
    """The test framework the repository already uses, in words for the prompt (for Java, that of ``target``'s
    module: its build file's dependencies and those of the build files above it)."""
    if language is Language.GO:
        return "Go's standard testing package (func TestXxx(t *testing.T)), no third-party assertion library"
    if language is Language.RUST:
        return "Rust's built-in #[test] functions with assert!/assert_eq!, no extra crates"
    if language is Language.TYPESCRIPT:
        manifest = blob_text(tree, "package.json", READ_LIMIT) or "{}"
        try:
            data = json.loads(manifest)
        except ValueError:
            data = {}
        deps = {**(data.get("devDependencies") or {}), **(data.get("dependencies") or {})}
        script = str((data.get("scripts") or {}).get("test", ""))
        for name, words in (
            ("vitest", "vitest (import { describe, it, expect } from 'vitest')"),
            ("jest", "jest (describe/it/expect globals)"),
            ("mocha", "mocha with node:assert"),
        ):
            if name in deps or name in script:
                return words
        return "node:test (import { test } from 'node:test'; import assert from 'node:assert/strict')"
    if language is Language.JAVA:
        return junit.framework(tree, files, target)
    return "the repository's test framework"


_GO_TEST = re.compile(r"^func (Test[A-Z0-9_]\w*)\(\s*\w+\s+\*testing\.T\s*\)", re.M)
_RUST_TEST = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn\s+(\w+)")
_JS_CASE = re.compile(r"\b(?:it|test)\s*\(\s*['\"`]")


def test_ids(language: Language, path: str, content: str) -> list[str]:
    """The ``--select`` ids of a candidate file in its runner's format (for Node: the file, which runs it all)."""
    if language is Language.GO:
        where = PurePosixPath(path).parent.as_posix()
        return [f"{where}::{name}" for name in _GO_TEST.findall(content)]
    if language is Language.RUST:
        return [f"{path}::{name}" for name in _RUST_TEST.findall(content)]
    if language is Language.TYPESCRIPT:
        return [path] if _JS_CASE.search(content) else []
    if language is Language.JAVA:
        return [f"{path}::{name}" for name in junit.test_methods(content)]
    return []


def expected_tests(language: Language, content: str) -> int:
    """How many tests the file declares, as its runner counts them (Go counts subtests in their parent)."""
    if language is Language.GO:
        return len(_GO_TEST.findall(content))
    if language is Language.RUST:
        return len(_RUST_TEST.findall(content))
    if language is Language.JAVA:
        return len(junit.test_methods(content))  # a parameterised or repeated test runs at least once
    return len(_JS_CASE.findall(content))


# ---------------------------------------------------------------- prompts


def system_prompt(language: Language, tool: str, paths: dict[str, str], crate: str = "") -> str:
    where = "\n".join(f"- tests for {src} go in {dst}" for src, dst in sorted(paths.items()))
    extra = {
        Language.GO: "Use the package clause of the file under test (same package), so unexported names work.",
        Language.RUST: f"These are integration tests: only the crate's public API (`use {crate or 'the_crate'}::…`).",
        Language.TYPESCRIPT: "Import the code under test by a relative path, as the existing tests do.",
        Language.JAVA: junit.rules(paths),
    }.get(language, "")
    return f"""You write unit tests for a {language} repository with {tool}.
Write tests ONLY in these new files, never any other file:
{where}
{extra}
Rules: deterministic; no network; no sleeps; each test's name says what it checks; assert what the code does now;
the file must compile on its own with the repository's existing dependencies only.
Return ONE JSON object: {{"files": [{{"path": "<one of the paths above>", "content": "<whole file>"}}]}}."""


def user_prompt(spec: TestSpec, tree: pygit2.Tree, style: str) -> str:
    cases = "\n".join(f"- {c.name}: {c.goal} ({c.target_path}; {'; '.join(c.steps)})" for c in spec.cases)
    missing = "\n".join(f"- {t.ref}: lines never run {t.missing_lines[:40]}" for t in spec.targets)
    code = []
    for path in sorted({t.path for t in spec.targets}):
        text = blob_text(tree, path, READ_LIMIT) or ""
        numbered = "\n".join(f"{i:4d} {line}" for i, line in enumerate(text[:_CODE_CHARS].splitlines(), 1))
        code.append(f"// {path}\n{numbered}")
    return (
        f"CASES\n{cases or '(none)'}\n\nLINES TO COVER\n{missing}\n\nCODE\n" + "\n\n".join(code) + "\n\n"
        f"STYLE GUIDE (an existing test file):\n{style or '(no tests yet)'}\n\nReturn the JSON object."
    )


# ---------------------------------------------------------------- the gates' verdict


@dataclass
class Verdict:
    kept: list[KeptTest] = field(default_factory=list)
    dropped: list[DroppedTest] = field(default_factory=list)
    failing: dict[str, str] = field(default_factory=dict)  # file → what the gates said, for the repair round


def _gained(spec: TestSpec, report: BuildReport) -> dict[str, int]:
    """Per target ref: lines B1 left uncovered that the selected tests ran."""
    out: dict[str, int] = {}
    cov = report.coverage
    for t in spec.targets:
        fc = cov.file(t.path) if cov else None
        if fc is None:
            continue
        still = set(fc.missing_lines) | set(fc.excluded_lines)
        out[t.ref] = len(set(t.missing_lines) - still)
    return out


def judge(
    language: Language, spec: TestSpec, files: dict[str, str], sources: dict[str, str], report: BuildReport | None
) -> Verdict:
    """Which candidate files pass: they compile, their tests are collected, pass every run and gain coverage.

    ``sources`` maps each candidate file to the target file it tests; ``report`` is the gates' (None: nothing to
    run). A failure the report names is attributed to the candidate whose test it is; a build that fails to
    compile fails every candidate of the round."""
    v = Verdict()
    ids = {path: test_ids(language, path, text) for path, text in files.items()}
    for path in sorted(files):
        mine = ids[path]
        if not mine or report is None:
            v.failing[path] = "the file declares no test the runner would collect"
            v.dropped.append(DroppedTest(node_id=path, reason=DropReason.NOT_COLLECTED, detail=v.failing[path]))
            continue
        if report.status is not BuildStatus.PASSED and not _blames_others(report, mine):
            reason, words = _why(report, mine)
            v.failing[path] = words
            v.dropped.append(DroppedTest(node_id=path, reason=reason, detail=words[:500]))
            continue
        if report.tests.total < sum(expected_tests(language, files[p]) for p in files if ids[p]):
            v.failing[path] = f"the runner collected {report.tests.total} test(s), fewer than the files declare"
            v.dropped.append(DroppedTest(node_id=path, reason=DropReason.NOT_COLLECTED, detail=v.failing[path]))
            continue
        target = sources[path]
        gained = {ref: n for ref, n in _gained(spec, report).items() if ref.split("::")[0] == target and n}
        if not gained:
            v.dropped.append(
                DroppedTest(
                    node_id=path,
                    reason=DropReason.NO_COVERAGE_GAIN,
                    detail=f"runs no line of {target} the build left uncovered",
                )
            )
            continue
        lines = max(gained.values())
        ref = max(gained, key=lambda r: gained[r])
        v.kept += [KeptTest(node_id=i, target=ref, lines_gained=lines) for i in mine]
    return v


def _blames_others(report: BuildReport, mine: list[str]) -> bool:
    """A report whose failures are all other candidates' tests (a compile error blames every candidate)."""
    if report.failed_tests and report.fail_reason is not None and str(report.fail_reason) == "tests":
        return not any(_matches(f, mine) for f in report.failed_tests)
    return False


def _matches(failed: str, mine: list[str]) -> bool:
    return any(failed == i or failed.startswith(i + "::") or i.startswith(failed + "::") for i in mine)


def _why(report: BuildReport, mine: list[str]) -> tuple[DropReason, str]:
    """The drop reason and the runner's words (the compiler's, for a package or file that did not load)."""
    failures = [f for f in report.failures if _matches(f.node_id, mine)] or report.failures
    texts = [(f.traceback or f.message or f.node_id).strip()[:700] for f in failures]
    words = "; ".join(t for t in [*texts, report.error_reason or ""] if t)[:1500] or str(report.status)
    reason = str(report.fail_reason or "")
    if reason == "build" or any(f.kind is FailureKind.ERROR for f in failures):
        return DropReason.UNPARSABLE, f"does not compile: {words}"
    if reason == "lint":
        return DropReason.LINT, f"the repository's linters reject it: {words}"
    if report.status is BuildStatus.ERRORED:
        return DropReason.FAILS, f"the gates errored: {words}"
    if report.runs > 1:  # it passed the runs before: a flaky test
        return DropReason.FAILS, f"fails on run {report.runs} after passing the one(s) before: {words}"
    return DropReason.FAILS, f"fails: {words}"


# ---------------------------------------------------------------- the builder


def build_tests(
    spec: TestSpec, repo: pygit2.Repository, language: Language, llm: LLMClient, gates: GateRun, runs: int = FLAKE_RUNS
) -> GeneratedTests:
    """LLM draft → confinement → the language runner's gates (N runs) → one repair round → commit what passed."""
    result = GeneratedTests(
        spec_id=spec.id, branch_name=branch_for(spec.id), precheck=BuildStatus.FAILED, generator="llm"
    )
    if language not in SUPPORTED:
        note = f"the LLM test builder writes no {language} tests (Go, TypeScript/JavaScript, Rust and Java)"
        return result.model_copy(update={"generator": "none", "notes": [note]})
    if not spec.targets:
        return result.model_copy(update={"notes": ["the TestSpec has no targets: nothing to generate"]})
    tree = repo.revparse_single(spec.parent_commit_sha).peel(pygit2.Commit).tree
    files_now = _paths(tree)
    sources = {test_path(language, t.path, tree, files_now): t.path for t in spec.targets}
    allowed = set(sources)
    style = next((blob_text(tree, f, 16_000) for f in existing_tests(language, files_now)), "") or ""
    crate = ""
    if language is Language.RUST:
        m = re.search(r'^name\s*=\s*"([^"]+)"', blob_text(tree, "Cargo.toml", READ_LIMIT) or "", re.M)
        crate = m.group(1).replace("-", "_") if m else ""
    by_target = {target: path for path, target in sources.items()}
    tool = framework(language, tree, files_now, spec.targets[0].path)
    system = system_prompt(language, tool, by_target, crate)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(spec, tree, style)}]
    before = llm.ledger.by_stage.get(STAGE, 0)
    dropped: list[DroppedTest] = []
    notes: list[str] = []
    best: tuple[dict[str, str], Verdict] | None = None
    round_no = 0
    while True:
        draft = llm.complete_json(STAGE, messages, TestDraft)
        files: dict[str, str] = {}
        refused: list[str] = []
        if draft.diff:
            refused.append("a diff was returned: whole files are asked for")
        for f in draft.files:
            rejection = check(f.path, f.content, allowed, tree, language)
            if rejection:
                detail = f"round {round_no}: {rejection.detail}"
                dropped.append(DroppedTest(node_id=f.path, reason=rejection.reason, detail=detail))
                refused.append(f"{f.path}: {rejection.detail}")
            else:
                files[f.path] = f.content
        feedback: list[str] = refused[:]
        if files:
            ids = sorted({i for p, t in files.items() for i in test_ids(language, p, t)})
            verdict = judge(language, spec, files, sources, gates(files, ids, runs) if ids else None)
            final = not verdict.failing or round_no == MAX_REPAIR_ROUNDS
            for d in verdict.dropped:
                dropped.append(d if final else d.model_copy(update={"detail": f"round {round_no}: {d.detail}"}))
            if best is None or len({k.node_id for k in verdict.kept}) >= len({k.node_id for k in best[1].kept}):
                best = (files, verdict)
            feedback += [f"{p}: {w}" for p, w in verdict.failing.items()]
            if not verdict.failing:
                break
        if round_no == MAX_REPAIR_ROUNDS:
            break
        round_no += 1
        notes.append(f"round {round_no}: repairing {len(feedback)} problem(s)")
        ask = (
            f"The tests did not pass the checks (compile, collected, {runs} runs, coverage gain):\n"
            + "\n".join(feedback)
            + "\n\nFix them. Return the whole corrected files in the same JSON format."
        )
        messages += [{"role": "assistant", "content": draft.model_dump_json()}, {"role": "user", "content": ask}]
    tokens = llm.ledger.by_stage.get(STAGE, 0) - before
    result = result.model_copy(update={"repair_rounds": round_no, "llm_tokens": tokens})
    if best is None or not best[1].kept:
        notes.append("no generated test passed the gates; nothing committed")
        return result.model_copy(update={"dropped": dropped, "notes": notes})
    files, verdict = best
    kept_files = {p: t for p, t in files.items() if any(_in_file(language, k.node_id, p, t) for k in verdict.kept)}
    findings = scan(kept_files)
    if findings:
        blocked = [
            DroppedTest(node_id=p, reason=DropReason.SECRET, detail="its file holds a secret") for p in kept_files
        ]
        notes += [f"secret found, commit blocked: {f}" for f in findings]
        return result.model_copy(update={"dropped": [*dropped, *blocked], "notes": notes, "files": sorted(kept_files)})
    message = (
        f"tests: add generated {language} tests for {spec.id}\n\nSpec: {spec.id}\nParent: {spec.parent_commit_sha}\n"
    )
    sha = commit_files(repo, spec.parent_commit_sha, result.branch_name, kept_files, message)
    return result.model_copy(
        update={
            "precheck": BuildStatus.PASSED,
            "commit_sha": sha,
            "kept": verdict.kept,
            "files": sorted(kept_files),
            "dropped": dropped,
            "notes": notes,
        }
    )


def _in_file(language: Language, node_id: str, path: str, text: str) -> bool:
    return node_id in test_ids(language, path, text)
