"""The gates every candidate test passes inside the sandbox, in the repository's own environment:

parse → ``ruff check --fix`` + ``ruff format`` (new files only) → ``pytest --collect-only`` finds it → every
fixture it asks for exists → passes ``runs`` runs in a row (else FAILS or FLAKY) → raises the coverage of a
target file: a line or a branch the build missed there (per-test coverage contexts with arcs, data in its own
folder) → minimised greedily on lines + branches: a test adding nothing beyond the tests already kept is
dropped. Files are rewritten without the dropped tests and run once more.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from mendflow_runner import coverage_report, lint, repo_config, testing
from mendflow_runner.proc import Log, StepResult, run, sandbox

from . import edit, progress

LINT_BLOCKING = re.compile(r"\b(F\d+|E9\d*|PLE\d+)\b")  # real errors (undefined names, syntax), not style
_FIXTURE_NOT_FOUND = re.compile(r"fixture '([^']+)' not found")


# Runs in the repository's venv, where coverage.py lives: per test context, the lines and arcs it ran in the
# given files. ``coverage json --show-contexts`` gives lines only; a test that takes only a missed branch
# shows in its arcs.
_PER_TEST_SCRIPT = """
import json, os, re, sys
from coverage import CoverageData
q = json.loads(sys.argv[1])
root, wanted = os.path.realpath(q["root"]), set(q["paths"])
data = CoverageData(basename=q["data"])
data.read()
contexts = sorted(c for c in data.measured_contexts() if c)
out = {}
for measured in data.measured_files():
    rel = os.path.relpath(os.path.realpath(measured), root).replace(os.sep, "/")
    if rel not in wanted:
        continue
    per = out.setdefault(rel, {})
    for ctx in contexts:
        data.set_query_contexts(["^" + re.escape(ctx) + "$"])
        lines, arcs = data.lines(measured) or [], data.arcs(measured) or []
        if lines or arcs:
            per[ctx] = {"lines": sorted(lines), "arcs": sorted(arcs)}
with open(q["out"], "w", encoding="utf-8") as fh:
    json.dump(out, fh)
"""


@dataclass(frozen=True)
class Unit:
    """One thing the build left uncovered: a line, or a branch (from line, to line; negative: an exit)."""

    path: str
    kind: str  # "line" | "branch"
    at: int | tuple[int, int]

    @property
    def line(self) -> int:
        return abs(self.at[0]) if isinstance(self.at, tuple) else self.at


@dataclass
class TargetRefs:
    """Which target a gained unit counts for: the innermost function target around it, else the file."""

    spans: dict[str, list[tuple[int, int, str]]] = field(default_factory=dict)

    def ref_of(self, unit: Unit) -> str:
        around = [(end - start, ref) for start, end, ref in self.spans.get(unit.path, []) if start <= unit.line <= end]
        return min(around)[1] if around else unit.path


def _target_refs(targets: list[dict[str, Any]]) -> TargetRefs:
    refs = TargetRefs()
    for t in targets:
        if t.get("symbol"):
            span = (int(t.get("start_line", 0)), int(t.get("end_line", 0)), f"{t['path']}::{t['symbol']}")
            refs.spans.setdefault(t["path"], []).append(span)
    return refs


def _missed_units(targets: list[dict[str, Any]]) -> dict[str, set[Unit]]:
    """Per targeted file, every line and branch the build missed there (any target of the file names them)."""
    missed: dict[str, set[Unit]] = {}
    for t in targets:
        units = missed.setdefault(t["path"], set())
        units |= {Unit(t["path"], "line", int(n)) for n in t.get("missing_lines", [])}
        units |= {Unit(t["path"], "branch", (int(a), int(b))) for a, b in t.get("missing_branches", [])}
    return missed


@dataclass
class Drop:
    node_id: str
    reason: str
    detail: str = ""


@dataclass
class Outcome:
    kept: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[Drop] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kept": self.kept,
            "dropped": [d.__dict__ for d in self.dropped],
            "files": self.files,
            "notes": self.notes,
            "feedback": "\n\n".join(self.feedback)[-6000:],
        }


def safe_rel(path: str, tests_dir: str) -> PurePosixPath:
    """Defence in depth (the trusted side checked already): a relative .py path under the tests dir."""
    p = PurePosixPath(path)
    if (
        p.is_absolute()
        or ".." in p.parts
        or p.suffix != ".py"
        or p.parts[: len(PurePosixPath(tests_dir).parts)] != PurePosixPath(tests_dir).parts
    ):
        raise ValueError(f"{path!r} is not a .py file under {tests_dir}/")
    return p


class Gates:
    def __init__(
        self,
        src: Path,
        venv_python: str,
        env: dict[str, str],
        log: Log,
        work: Path,
        remaining: Any,
        runs: int = 5,
        type_probes: bool = False,
    ) -> None:
        self.src, self.python, self.log, self.work, self.remaining, self.runs = (
            src,
            venv_python,
            log,
            work,
            remaining,
            runs,
        )
        # The build stage runs `pytest -m <marker>` when the repo declares it; kept tests must carry it too.
        self.marker = env.get("MENDFLOW_JOB_TEST_MARKER", "fast")
        venv_bin = str(Path(venv_python).parent)
        env = {**env, **repo_config.test_setenv(src)}
        self.env = {
            **env,
            "VIRTUAL_ENV": str(Path(venv_bin).parent),
            "PATH": f"{venv_bin}:{env.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(p for p in (str(testing.PLUGIN_DIR), env.get("PYTHONPATH", "")) if p),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        self.ruff = lint.ruff_for(Path(venv_bin).parent)  # the ruff B2 lints with
        # Pynguin calls with wrong types on purpose (to reach error paths): such a line gets mypy's ignore for
        # exactly the error it has, as a person writing that probe would; elsewhere a type error drops the test.
        self.type_probes = type_probes
        # Generated tests, the repo's conftest and its config run as untrusted code: offline, only work/ writable.
        self.sandboxed = sandbox(work, (testing.PLUGIN_DIR,))
        self.out = Outcome()
        self.written: list[str] = []  # every generated file put in the tree, kept or not

    # -- helpers --------------------------------------------------------------------------------------------
    def _run(self, argv: list[str], extra_env: dict[str, str] | None = None) -> StepResult:
        return run(
            self.sandboxed(argv),
            cwd=self.src,
            env={**self.env, **(extra_env or {})},
            timeout=max(5.0, self.remaining()),
            log=self.log,
        )

    def _pytest_options(self) -> list[str]:
        return [*testing.cache_options(self.work), "-p", "mendflow_job_plugin", *testing.collection_options(self.src)]

    def _pytest(self, args: list[str], extra_env: dict[str, str] | None = None) -> StepResult:
        return self._run(
            [self.python, "-m", "pytest", *self._pytest_options(), *args],
            extra_env,
        )

    def _drop(self, node_id: str, reason: str, detail: str = "") -> None:
        self.out.dropped.append(Drop(node_id, reason, detail[:2000]))

    # -- gates ----------------------------------------------------------------------------------------------
    def write(self, files: dict[str, str], tests_dir: str) -> list[str]:
        alive = []
        for path, text in sorted(files.items()):
            try:
                rel = safe_rel(path, tests_dir)
            except ValueError as exc:
                self._drop(path, "outside_tests_dir", str(exc))
                continue
            target = self.src / rel
            parent = target.parent
            while parent != self.src:  # a symlinked directory in the repo could point anywhere
                if parent.is_symlink():
                    self._drop(path, "outside_tests_dir", f"{parent.relative_to(self.src)} is a symlink")
                    break
                parent = parent.parent
            else:
                if target.is_symlink():
                    self._drop(path, "outside_tests_dir", f"{path} is a symlink")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                self.written.append(path)
                alive.append(path)
        return alive

    def parse(self, paths: list[str]) -> list[str]:
        alive = []
        for path in paths:
            try:
                ast.parse((self.src / path).read_text(encoding="utf-8"), filename=path)
                alive.append(path)
            except SyntaxError as exc:
                self._drop(path, "unparsable", f"line {exc.lineno}: {exc.msg}")
                self.out.feedback.append(f"{path} does not parse: line {exc.lineno}: {exc.msg}")
        return alive

    def lint(self, paths: list[str]) -> list[str]:
        if not paths:
            return []
        errors, gone = self._ruff(paths), set()
        if self.type_probes:  # Pynguin's files: a test ruff faults (a repeated dict key, say) goes, the rest stays
            faulted = [p for p in paths if errors[p]]
            gone = {p for p in faulted if not self._without_faulted(p, errors[p])}
            errors.update(self._ruff([p for p in faulted if p not in gone]))
        typed = self._mypy(paths)
        if self.type_probes and any(typed.values()):
            for path, found in typed.items():  # every probe file annotated, then one mypy run judges them all
                target = self.src / path
                target.write_text(edit.ignore_type_errors(target.read_text(encoding="utf-8"), found), encoding="utf-8")
            typed = self._mypy(paths)
        alive, cut = [], []
        for path in (p for p in paths if p not in gone):
            if errors[path]:
                self._drop(path, "lint", "; ".join(errors[path][:5]))
                self.out.feedback.append(f"ruff errors in {path}:\n" + "\n".join(errors[path][:20]))
            elif typed.get(path) and not self._without_faulted(path, typed[path]):
                self.out.feedback.append(f"mypy errors in {path}:\n" + "\n".join(typed[path][:20]))
            else:
                alive.append(path)
                cut += [path] if typed.get(path) else []
        for path, left in self._ruff(cut).items():  # tests cut for mypy: what only they imported goes too
            if left:
                self._drop(path, "lint", "; ".join(left[:5]))
                alive.remove(path)
        return alive

    def _drop_faulted_kept(self, final: list[str], path: str, found: list[str], whole: bool = False) -> None:
        """Drop the kept tests of ``path`` that ``found`` (ruff's ``path:line:…`` findings) point into; all of
        them when a finding is outside every test, or with ``whole``."""
        if not found:
            return
        nodes = {k["node_id"] for k in self.out.kept if k["node_id"].startswith(f"{path}::")}
        tests, outside = edit.tests_at((self.src / path).read_text(encoding="utf-8"), _finding_lines(found))
        if not (whole or outside):
            nodes = {n for n in nodes if edit.function_key(n) in tests}
        self._drop_from_files(final, nodes, "; ".join(found[:3]), reason="lint")

    def _ruff(self, paths: list[str], every: bool = False) -> dict[str, list[str]]:
        """ruff's safe fixes and its format applied to ``paths``, then path → the blocking findings left (with
        ``every``, every finding)."""
        if not paths:
            return {}
        self._run([self.ruff, "check", "--fix", "--no-cache", "--quiet", *self._ruff_rules(), *paths])
        self._run([self.ruff, "format", "--no-cache", "--quiet", *paths])
        left = self._run(
            [self.ruff, "check", "--no-cache", "--output-format=concise", "--quiet", *self._ruff_rules(), *paths]
        )
        lines = left.stdout.splitlines()
        wanted = [line for line in lines if every or LINT_BLOCKING.search(line)]
        return {p: [line for line in wanted if line.startswith(f"{p}:")] for p in paths}

    def _without_faulted(self, path: str, found: list[str]) -> bool:
        """Drop the tests a linter (ruff, mypy) finds fault with (``path:line:…`` findings), as B2's would;
        False (the file dropped) when a finding is outside every test or no test is left."""
        target = self.src / path
        source = target.read_text(encoding="utf-8")
        by_line: dict[int, list[str]] = {}
        for finding in found:
            by_line.setdefault(_finding_line(finding), []).append(finding)
        tests, outside = edit.tests_at(source, set(by_line))
        if outside or set(edit.test_names(source)) <= tests:
            self._drop(path, "lint", "; ".join(found[:5]))
            return False
        for key in sorted(tests):
            said = [f for n, fs in by_line.items() if key in edit.tests_at(source, {n})[0] for f in fs]
            self._drop(f"{path}::{key}", "lint", "; ".join(said[:3]))
        target.write_text(edit.remove_functions(source, tests), encoding="utf-8")
        return True

    def _mypy(self, paths: list[str]) -> dict[str, list[str]]:
        """path → mypy's findings in it, as B2 will run mypy (the repo's config, only where it configures it)."""
        if repo_config.mypy_config(self.src) is None:
            return {}
        try:
            found = lint.mypy(self.src, self.python, self.env, self.remaining, self.log, wrap=self.sandboxed)
        except lint.LintToolError as exc:
            self.out.notes.append(f"mypy could not run in the gates: {exc}")
            return {}
        return {path: [f for f in found if f.startswith(f"{path}:")] for path in paths}

    def collect(self, paths: list[str]) -> dict[str, list[str]]:
        """path → collected node ids; a file pytest cannot collect, or with no test in it, is dropped."""
        if not paths:
            return {}
        step = self._pytest(["--collect-only", "-q", *paths])
        ids: dict[str, list[str]] = {p: [] for p in paths}
        for line in step.stdout.splitlines():
            head = line.strip().split("::", 1)[0]
            if "::" in line and head in ids:
                ids[head].append(line.strip())
        for path in paths:
            if not ids[path]:
                errored = f"ERROR {path}" in step.stdout or f"ERROR collecting {path}" in step.stdout
                why = "collection error" if errored else "no test collected"
                self._drop(path, "not_collected", f"{why}: {step.last_stderr_line()}")
                self.out.feedback.append(f"pytest cannot collect {path}:\n{step.stdout[-2500:]}")
                del ids[path]
        return ids

    def fixtures(self, ids: dict[str, list[str]]) -> dict[str, list[str]]:
        """Drop tests asking for a fixture that pytest does not know (static check against --fixtures)."""
        if not ids:
            return ids
        step = self._pytest(["--fixtures", "-q", *ids])
        known = {m.group(1) for m in re.finditer(r"^([A-Za-z_]\w*)(?:\s|$)", step.stdout, re.M)}
        if not step.ok or not known:
            self.out.notes.append("fixture check skipped: pytest --fixtures failed")
            return ids
        for path, nodes in ids.items():
            wanted = edit.requested_fixtures((self.src / path).read_text(encoding="utf-8"))
            keep = []
            for node in nodes:
                missing = sorted(wanted.get(edit.function_key(node), set()) - known)
                if missing:
                    self._drop(node, "undefined_fixture", f"unknown fixture(s): {', '.join(missing)}")
                    self.out.feedback.append(f"{node} asks for undefined fixture(s) {missing}")
                else:
                    keep.append(node)
            ids[path] = keep
        return ids

    def stability(self, nodes: list[str]) -> list[str]:
        """Run the tests ``runs`` times: passing every time keeps them; a mix is FLAKY; never is FAILS."""
        if not nodes:
            return []
        outcomes: dict[str, list[str]] = {n: [] for n in nodes}
        first_output = ""
        for i in range(self.runs):
            events = self.work / f"run-{i}.jsonl"
            events.unlink(missing_ok=True)
            step = self._pytest(["-q", "--tb=short", *nodes], {"MENDFLOW_PYTEST_EVENTS": str(events)})
            first_output = first_output or (step.stdout if not step.ok else "")
            seen = _outcomes(events)
            for n in nodes:
                outcomes[n].append(seen.get(n, "failed"))
        stable = []
        for n, results in outcomes.items():
            if all(r == "passed" for r in results):
                stable.append(n)
            elif "failed" not in results:  # skipped or xfail: it asserts nothing the build could rely on
                self._drop(n, "fails", f"never passes (outcomes over {self.runs} runs: {', '.join(results)})")
            elif all(r == "failed" for r in results):
                fixture = _missing_fixture(first_output, n)
                reason = "undefined_fixture" if fixture else "fails"
                self._drop(n, reason, fixture or _failure_excerpt(first_output, n))
                self.out.feedback.append(f"{n} fails:\n{_failure_excerpt(first_output, n)}")
            else:
                self._drop(n, "flaky", f"outcomes over {self.runs} runs: {', '.join(results)}")
        return stable

    def coverage(self, nodes: list[str], targets: list[dict[str, Any]]) -> dict[str, set[Unit]]:
        """Test → the units (line or branch) the build never ran in the targeted files, which this test runs."""
        if not nodes:
            return {}
        folder = self.work / "coverage-new"  # its own folder: no stray .coverage.* gets combined in
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / ".coverage"
        env = {"COVERAGE_FILE": str(data), testing.CONTEXTS_VARIABLE: "1"}  # which test ran which line
        argv = testing.coverage_argv(self.python, self.src)
        self._run([*argv, "-m", "pytest", *self._pytest_options(), "-q", *nodes], env)
        if coverage_report.parallel_files(data):
            timeout = max(5.0, self.remaining())
            coverage_report.combine(self.src, self.python, data, self.env, timeout, self.log, self.sandboxed)
        missed = _missed_units(targets)
        per_test = folder / "per-test.json"
        query = {"data": str(data), "root": str(self.src), "paths": sorted(missed), "out": str(per_test)}
        step = self._run([self.python, "-c", _PER_TEST_SCRIPT, json.dumps(query)])
        if not step.ok or not per_test.is_file():
            self.out.notes.append(f"coverage measurement failed: {step.describe()}")
            return {}
        per_file: dict[str, dict[str, dict[str, list[Any]]]] = json.loads(per_test.read_text(encoding="utf-8"))
        gained: dict[str, set[Unit]] = {n: set() for n in nodes}
        for path, by_context in per_file.items():
            for ctx, ran in by_context.items():
                if ctx not in gained:
                    continue
                units = {Unit(path, "line", int(n)) for n in ran["lines"]}
                units |= {Unit(path, "branch", (int(a), int(b))) for a, b in ran["arcs"]}
                gained[ctx] |= units & missed[path]
        return gained

    def minimise(self, gained: dict[str, set[Unit]], refs: TargetRefs) -> list[str]:
        """Greedy set cover on lines + branches: the test adding most first; one adding nothing is dropped."""
        covered: set[Unit] = set()
        kept = []
        for node in sorted(gained, key=lambda n: (-len(gained[n]), n)):
            new = gained[node] - covered
            if not gained[node]:
                self._drop(node, "no_coverage_gain", "runs no line or branch the build left uncovered")
            elif not new:
                self._drop(node, "no_coverage_gain", "adds no line or branch beyond the tests already kept")
            else:
                covered |= new
                by_target: dict[str, int] = {}
                for unit in new:
                    ref = refs.ref_of(unit)
                    by_target[ref] = by_target.get(ref, 0) + 1
                self.out.kept.append(
                    {
                        "node_id": node,
                        "target": max(sorted(by_target), key=lambda r: by_target[r]),
                        "lines_gained": sum(u.kind == "line" for u in new),
                        "branches_gained": sum(u.kind == "branch" for u in new),
                    }
                )
                kept.append(node)
        return kept

    def rewrite(self, ids: dict[str, list[str]], kept: list[str]) -> None:
        """Files without their dropped tests; re-linted and run once more to prove they still pass."""
        keep_keys: dict[str, set[str]] = {}
        for node in kept:
            keep_keys.setdefault(node.split("::", 1)[0], set()).add(edit.function_key(node))
        final = []
        for path in ids:
            source = (self.src / path).read_text(encoding="utf-8")
            if path not in keep_keys:
                continue
            drop = {k for k in edit.test_names(source) if k not in keep_keys[path]}
            source = edit.remove_functions(source, drop)
            if self.marker in repo_config.declared_markers(self.src):
                source = edit.mark_module(source, self.marker)  # else the build's `pytest -m <marker>` skips them
            (self.src / path).write_text(source, encoding="utf-8")
            final.append(path)
        if not final:
            return
        # The same rules the next build applies: an import left unused by minimisation would fail it. A finding
        # in a kept test takes that test out (and what only it imported); one outside every test, the file's.
        faulted = {path: found for path, found in self._ruff(final, every=True).items() if found}
        for path, found in faulted.items():
            self._drop_faulted_kept(final, path, found)
        # Only the files just cut are fixed and judged again (what only the cut tests imported goes).
        for path, found in self._ruff([p for p in faulted if (self.src / p).exists()], every=True).items():
            self._drop_faulted_kept(final, path, found, whole=True)
        final = [p for p in final if (self.src / p).exists()]
        if not final:
            return
        step = self._pytest(["-q", *final])
        if not step.ok:  # removing a test broke another (a shared helper, say): keep nothing from them
            self.out.notes.append(f"minimised files fail when run together: {step.last_stderr_line()}")
            for item in list(self.out.kept):
                self._drop(item["node_id"], "fails", "fails after minimisation")
            self.out.kept.clear()
            return
        self.with_suite(final)
        self.out.files = {p: (self.src / p).read_text(encoding="utf-8") for p in final if (self.src / p).exists()}

    def with_suite(self, final: list[str]) -> None:
        """Run the repo's whole suite as the next build will; new tests that fail only there are dropped.

        The earlier gates run the new tests on their own; a test that depends on order or shared state
        (a module-level cache, say) passes there and breaks the build after it. Generated files with no kept
        test leave the tree first: their failing tests would fail the suite, and every kept test with it.
        """
        for path in set(self.written) - set(final):  # a file none of whose tests was kept is no part of it
            (self.src / path).unlink(missing_ok=True)
        selection = ["-m", self.marker] if self.marker in repo_config.declared_markers(self.src) else []
        selection += testing.suite_paths(self.src)
        for _ in range(3):
            events = self.work / "suite.jsonl"
            events.unlink(missing_ok=True)
            step = self._pytest(["-q", "--tb=short", *selection], {"MENDFLOW_PYTEST_EVENTS": str(events)})
            outcomes = _outcomes(events)
            if step.ok:
                self._drop_uncollected(final, outcomes)
                return
            failed = {n for n, outcome in outcomes.items() if outcome == "failed"}
            new_failed = {k["node_id"] for k in self.out.kept if k["node_id"] in failed}
            if not new_failed or failed - new_failed:  # an existing test broke: any new test may be the cause
                new_failed = {k["node_id"] for k in self.out.kept}
            self._drop_from_files(final, new_failed, "fails when run with the whole suite")
            if not self.out.kept:
                return
        self._drop_from_files(final, {k["node_id"] for k in self.out.kept}, "the whole suite still fails")

    def _drop_uncollected(self, final: list[str], outcomes: dict[str, str]) -> None:
        """Drop kept tests the repo's own test command never ran (its ``testpaths``, ``python_files`` or
        ``--ignore`` leave them out): they would add nothing in B2."""
        unseen = {k["node_id"] for k in self.out.kept if k["node_id"] not in outcomes}
        if unseen:
            self._drop_from_files(final, unseen, "the repository's own test command does not run it", "not_collected")

    def _ruff_rules(self) -> list[str]:
        """The rule selection the build's runner uses for this repository."""
        return [] if repo_config.has_ruff_config(self.src) else ["--select", lint.UNCONFIGURED_RULES]

    def _drop_from_files(self, final: list[str], nodes: set[str], detail: str, reason: str = "fails") -> None:
        for node in nodes:
            self._drop(node, reason, detail)
        self.out.kept = [k for k in self.out.kept if k["node_id"] not in nodes]
        for path in final:
            names = {edit.function_key(n) for n in nodes if n.split("::", 1)[0] == path}
            if not names or not (self.src / path).exists():  # not this file's tests, or a file dropped already
                continue
            source = (self.src / path).read_text(encoding="utf-8")
            remaining = [n for n in edit.test_names(source) if n not in names]
            if remaining:
                (self.src / path).write_text(edit.remove_functions(source, names), encoding="utf-8")
            else:
                (self.src / path).unlink()

    def run_all(
        self, files: dict[str, str], tests_dir: str, targets: list[dict[str, Any]], report: bool = False
    ) -> Outcome:
        """All gates; with ``report``, a progress line per file as it leaves them (dropped, or through)."""
        gated = progress.GatedFiles(files if report else ())
        paths = self.write(files, tests_dir)
        gated.alive(paths)
        paths = self.parse(paths)
        gated.alive(paths)
        paths = self.lint(paths)
        gated.alive(paths)
        ids = self.fixtures(self.collect(paths))
        gated.alive(ids)
        stable = self.stability([n for nodes in ids.values() for n in nodes])
        kept = self.minimise(self.coverage(stable, targets), _target_refs(targets))
        self.rewrite(ids, kept)
        gated.alive(())
        return self.out


def _finding_line(finding: str) -> int:
    """The line number of a ``path:line:…`` finding (ruff's and mypy's)."""
    return int(finding.split(":", 2)[1])


def _finding_lines(found: list[str]) -> set[int]:
    return {_finding_line(finding) for finding in found}


def _outcomes(events: Path) -> dict[str, str]:
    """nodeid → 'passed' | 'failed' | 'skipped' from the runner plugin's journal (any failed phase fails)."""
    result: dict[str, str] = {}
    if not events.is_file():
        return result
    for line in events.read_text(encoding="utf-8").splitlines():
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        node, outcome = ev.get("nodeid", ""), ev.get("outcome", "")
        if ev.get("event") != "report" or result.get(node) == "failed":
            continue
        if outcome == "failed" or outcome == "skipped" or ev.get("when") == "call":
            result[node] = outcome
    return result


def _missing_fixture(output: str, node: str) -> str:
    name = node.split("::")[-1]
    block = output.split(f"ERROR at setup of {name}", 1)
    if len(block) < 2:
        return ""
    m = _FIXTURE_NOT_FOUND.search(block[1][:3000])
    return f"unknown fixture: {m.group(1)}" if m else ""


def _failure_excerpt(output: str, node: str) -> str:
    name = node.split("::")[-1]
    for marker in (f"_ {name} _", f"{name} _"):
        if marker in output:
            return output.split(marker, 1)[1][:1500].strip()
    return output[-1500:].strip()
