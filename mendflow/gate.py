"""The no-weakening gate: a repair may make a test pass only by following the code, never by testing less.

Both versions of the test file are parsed and each collected test (``test*`` functions; ``test*`` methods of
``Test*`` classes without ``__init__`` and of ``TestCase`` subclasses) is read by one ``_TestReader``. A repair is
refused when a test disappears, checks fewer things, checks them more loosely, is skipped or xfailed, returns
before its asserts, or swallows what its asserts raise. Matching is by name; a test renamed to another collected
name is compared with its new self.

``changed_expectations`` is the other question: an expected literal that changed (``== 4`` → ``== 5``) is not
weaker, but it says the behaviour changed, so a person has to approve it.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

# Names whose appearance in a decorator, a ``pytestmark`` or a call means "do not run" or "failure is fine".
_SKIP_NAMES = {"skip", "skipif", "xfail", "skipIf", "skipUnless", "expectedFailure", "importorskip", "skipTest"}
_SKIP_EXCEPTIONS = {"SkipTest", "Skipped"}
_BROAD = {"Exception", "BaseException"}
# Assertion strength: 3 pins a value, 2 bounds it, 1 only checks truthiness, 0 cannot fail.
_OP_RANK: dict[type[ast.cmpop], int] = {ast.Eq: 3, ast.Is: 3}
_EXACT_METHODS = {
    "assertEqual", "assertEquals", "assertIs", "assertIsNone", "assertListEqual", "assertDictEqual",
    "assertSetEqual", "assertTupleEqual", "assertSequenceEqual", "assertMultiLineEqual", "assertCountEqual",
    "assertAlmostEqual", "assert_called_once_with", "assert_called_with", "assert_any_call", "assert_has_calls",
}  # fmt: skip
_TRUTH_METHODS = {"assertTrue", "assertFalse", "assert_"}
_RAISES = {"raises", "assertRaises", "assertRaisesRegex"}
_RENAME_SIMILARITY = 0.6  # a new test this close to a vanished one is that test renamed


@dataclass(frozen=True)
class Check:
    """One assertion: an ``assert``, a ``self.assert*``/``mock.assert_*`` call, or a ``raises`` context."""

    family: str  # "assert" (statements and assert calls) or "raises"
    rank: int
    text: str
    key: str  # the node's dump: equal keys are the same check
    expected: object = None  # the literal a value is compared with, else None


@dataclass
class TestFacts:
    __test__ = False
    name: str
    checks: list[Check] = field(default_factory=list)
    skips: int = 0
    returns_early: bool = False
    broad_handlers: int = 0
    swallowing: int = 0
    body: str = ""  # the body's source, to recognise a renamed test


@dataclass
class FileFacts:
    tests: dict[str, TestFacts] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)  # test class → skip marks on it
    module_skips: int = 0


def weakening(path: str, before: str, after: str) -> list[str]:
    """One line per way ``after`` tests less than ``before``; ``[]`` when the change is acceptable."""
    try:
        new = _read_file(after)
    except SyntaxError as exc:
        return [f"{path}: unparsable after the edit (line {exc.lineno}: {exc.msg})"]
    try:
        old = _read_file(before)
    except SyntaxError:
        return _textual_weakening(path, before, after)
    verdicts = [f"{path}::{c}: test class removed or no longer collected" for c in old.classes if c not in new.classes]
    verdicts += [
        f"{path}::{c}: skip or xfail added to the class"
        for c, skips in old.classes.items()
        if new.classes.get(c, 0) > skips
    ]
    if new.module_skips > old.module_skips:
        verdicts.append(f"{path}: skip or xfail added to the module (pytestmark)")
    for name, (was, now) in _pairs(old, new).items():
        if now is None:
            if not any(name.startswith(f"{c}::") for c in old.classes if c not in new.classes):
                verdicts.append(f"{path}::{name}: test removed or renamed so it is no longer collected")
            continue
        verdicts += [f"{path}::{name}: {v}" for v in _compare(was, now)]
    return verdicts


def changed_expectations(path: str, before: str, after: str) -> list[str]:
    """Assertions whose expected literal changed: not weaker, but a person must approve the new behaviour."""
    try:
        old, new = _read_file(before), _read_file(after)
    except SyntaxError:
        return []
    found = []
    for name, (was, now) in _pairs(old, new).items():
        if now is None:
            continue
        for a, b in _changed_pairs(was.checks, now.checks):
            if _is_literal(a.expected) and a.expected != b.expected:
                found.append(f"{path}::{name}: expected value changed: `{a.text}` → `{b.text}`")
    return found


# -- comparing ----------------------------------------------------------------------------------------------


def _pairs(old: FileFacts, new: FileFacts) -> dict[str, tuple[TestFacts, TestFacts | None]]:
    """Each old test with its new self: same name, else a new test in the same scope with a similar body."""
    added = [n for n in new.tests if n not in old.tests]
    pairs: dict[str, tuple[TestFacts, TestFacts | None]] = {}
    for name, facts in old.tests.items():
        if name in new.tests:
            pairs[name] = (facts, new.tests[name])
            continue
        scope = name.rpartition("::")[0]
        renamed = next((n for n in added if n.rpartition("::")[0] == scope and _similar(facts, new.tests[n])), None)
        if renamed is not None:
            added.remove(renamed)
        pairs[name] = (facts, new.tests[renamed] if renamed else None)
    return pairs


def _similar(old: TestFacts, new: TestFacts) -> bool:
    return SequenceMatcher(None, old.body, new.body).ratio() >= _RENAME_SIMILARITY


def _compare(was: TestFacts, now: TestFacts) -> list[str]:
    verdicts = []
    if len(now.checks) < len(was.checks):
        verdicts.append(f"fewer assertions ({len(was.checks)} → {len(now.checks)})")
    verdicts += [f"assertion loosened: `{a.text}` → `{b.text}`" for a, b in _changed_pairs(was.checks, now.checks)
                 if b.rank < a.rank]  # fmt: skip
    if now.skips > was.skips:
        verdicts.append("skip or xfail added")
    if now.returns_early and not was.returns_early:
        verdicts.append("returns before its assertions")
    if now.broad_handlers > was.broad_handlers:
        verdicts.append("an except widened to Exception, BaseException or a bare except")
    if now.swallowing > was.swallowing:
        verdicts.append("a try/except (or suppress) now swallows what its assertions raise")
    return verdicts


def _changed_pairs(before: list[Check], after: list[Check]) -> list[tuple[Check, Check]]:
    """Each changed check with its most similar new check of the same family (identical ones are set aside)."""
    unchanged = Counter(c.key for c in before) & Counter(c.key for c in after)
    left, right = _without(before, unchanged), _without(after, unchanged)
    pairs = []
    for old in left:
        candidates = [i for i, c in enumerate(right) if c.family == old.family]
        if candidates:
            best = max(candidates, key=lambda i: SequenceMatcher(None, old.text, right[i].text).ratio())
            pairs.append((old, right.pop(best)))
    return pairs


def _without(checks: list[Check], keys: Counter[str]) -> list[Check]:
    left = Counter(keys)
    kept = []
    for check in checks:
        if left[check.key] > 0:
            left[check.key] -= 1
        else:
            kept.append(check)
    return kept


def _textual_weakening(path: str, before: str, after: str) -> list[str]:
    """The original did not parse: fall back to counting tests and asserts in the text."""
    verdicts = []
    for what, pattern in (("tests", r"^\s*(?:async\s+)?def\s+test"), ("assertions", r"\bassert|\.raises\(")):
        was, now = len(re.findall(pattern, before, re.M)), len(re.findall(pattern, after, re.M))
        if now < was:
            verdicts.append(f"{path}: fewer {what} ({was} → {now})")
    return verdicts


# -- reading a file -----------------------------------------------------------------------------------------


def _read_file(text: str) -> FileFacts:
    tree = ast.parse(text)
    facts = FileFacts(module_skips=_pytestmark_skips(tree.body) + _module_skip_calls(tree.body))
    _read_scope(tree.body, "", facts)
    return facts


def _read_scope(body: list[ast.stmt], prefix: str, facts: FileFacts) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            name = prefix + node.name
            facts.tests[name] = _TestReader(name).read(node)
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            name = prefix + node.name
            facts.classes[name] = _skips_in(node.decorator_list) + _pytestmark_skips(node.body)
            _read_scope(node.body, f"{name}::", facts)


def _is_test_class(node: ast.ClassDef) -> bool:
    unittest = any(_dotted(b).endswith("TestCase") for b in node.bases)
    has_init = any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in node.body)
    disabled = any(
        isinstance(s, ast.Assign)
        and _assigns(s, "__test__")
        and isinstance(s.value, ast.Constant)
        and not s.value.value
        for s in node.body
    )
    return not disabled and (unittest or (node.name.startswith("Test") and not has_init))


def _pytestmark_skips(body: list[ast.stmt]) -> int:
    return sum(_skips_in([s.value]) for s in body if isinstance(s, ast.Assign) and _assigns(s, "pytestmark"))


def _module_skip_calls(body: list[ast.stmt]) -> int:
    """``pytest.skip(..., allow_module_level=True)``, ``pytest.importorskip(...)`` outside any function or class."""
    code = [
        s
        for s in body
        if not isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not (isinstance(s, ast.Assign) and _assigns(s, "pytestmark"))
    ]
    return sum(1 for s in code for n in ast.walk(s) if isinstance(n, ast.Call) and _terminal(n.func) in _SKIP_NAMES)


def _assigns(statement: ast.Assign, name: str) -> bool:
    return any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)


def _skips_in(exprs: list[ast.expr]) -> int:
    return sum(1 for e in exprs for n in ast.walk(e) if _terminal(n) in _SKIP_NAMES)


class _TestReader(ast.NodeVisitor):
    """Reads one test function: its checks, skips, early returns and exception handling."""

    def __init__(self, name: str) -> None:
        self.facts = TestFacts(name)
        self._depth = 0  # inside nested functions, a ``return`` does not end the test
        self._returns: list[int] = []

    def read(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> TestFacts:
        self.facts.skips += _skips_in(node.decorator_list)
        self.facts.body = "\n".join(ast.unparse(s) for s in node.body)
        for statement in node.body:
            self.visit(statement)
        last_check = max((c.lineno for c in self._check_nodes(node)), default=0)
        self.facts.returns_early = any(line < last_check for line in self._returns)
        return self.facts

    def _check_nodes(self, node: ast.AST) -> list[ast.stmt | ast.expr]:
        return [n for n in ast.walk(node) if isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and _is_check(n))]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_Return(self, node: ast.Return) -> None:
        if self._depth == 0:
            self._returns.append(node.lineno)
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self.facts.checks.append(
            Check("assert", _assert_rank(node.test), ast.unparse(node), ast.dump(node.test), _expected(node.test))
        )
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _terminal(node.func)
        if name in _RAISES:
            self.facts.checks.append(Check("raises", _raises_rank(node), ast.unparse(node), ast.dump(node)))
        elif _is_check(node):
            rank = 3 if name in _EXACT_METHODS else 1 if name in _TRUTH_METHODS else 2
            expected = _literal_among(node.args[:2]) if name in _EXACT_METHODS else None
            self.facts.checks.append(Check("assert", rank, ast.unparse(node), ast.dump(node), expected))
        elif name in _SKIP_NAMES:
            self.facts.skips += 1
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None and _terminal(node.exc.func if isinstance(node.exc, ast.Call) else node.exc) in (
            _SKIP_EXCEPTIONS
        ):
            self.facts.skips += 1
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        self.facts.broad_handlers += sum(1 for h in node.handlers if _is_broad(h.type))
        guarded = any(self._check_nodes(s) for s in node.body)
        if guarded and any(not _reraises(h) for h in node.handlers):
            self.facts.swallowing += 1
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        suppress = any(_terminal(i.context_expr.func) == "suppress" for i in node.items
                       if isinstance(i.context_expr, ast.Call))  # fmt: skip
        if suppress and any(self._check_nodes(s) for s in node.body):
            self.facts.swallowing += 1
        self.generic_visit(node)

    visit_AsyncWith = visit_With


# -- one check ----------------------------------------------------------------------------------------------


def _is_check(node: ast.Call) -> bool:
    name = _terminal(node.func)
    return name in _RAISES or (isinstance(node.func, ast.Attribute) and name.startswith("assert"))


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(
        isinstance(n, ast.Raise) or (isinstance(n, ast.Call) and _terminal(n.func) == "fail") for n in ast.walk(handler)
    )


def _is_literal(expected: object) -> bool:
    return isinstance(expected, tuple) and expected[:1] == ("literal",)


def _assert_rank(test: ast.expr) -> int:
    if isinstance(test, ast.Constant):
        return 3 if not test.value else 0  # ``assert False`` always fails; ``assert True`` never does
    if isinstance(test, ast.BoolOp):
        ranks = [_assert_rank(v) for v in test.values]
        return min(ranks) if isinstance(test.op, ast.And) else min(1, *ranks)
    if isinstance(test, ast.Compare):
        sides = [ast.dump(e) for e in (test.left, *test.comparators)]
        if len(set(sides)) == 1:
            return 0  # ``x == x``
        return min(_OP_RANK.get(type(op), 2) for op in test.ops)
    return 1


def _raises_rank(node: ast.Call) -> int:
    expected = (
        node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "expected_exception"), None)
    )
    if expected is None or _is_broad(expected):
        return 1
    matches = _terminal(node.func) == "assertRaisesRegex" or any(k.arg == "match" for k in node.keywords)
    return 3 if matches else 2


def _is_broad(exc: ast.expr | None) -> bool:
    if exc is None:
        return True
    if isinstance(exc, ast.Tuple):
        return any(_is_broad(e) for e in exc.elts)
    return _terminal(exc) in _BROAD


def _expected(test: ast.expr) -> object:
    """The literal an ``==`` (or ``is``) assertion compares with, else None."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.Is):
        return _literal_among([test.comparators[0], test.left])
    return None


def _literal_among(exprs: list[ast.expr]) -> object:
    for expr in exprs:
        try:
            return ("literal", ast.literal_eval(expr))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return ("expression",) if exprs else None


def _terminal(node: ast.AST) -> str:
    """The last name of a dotted reference: ``pytest.mark.skip`` → 'skip'; '' for anything else."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else ""
