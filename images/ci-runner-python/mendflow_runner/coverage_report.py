"""Turn coverage.py's JSON report into the ``Coverage`` part of a BuildReport (plain dicts, stdlib only)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from . import coverage_formats
from .proc import Log, StepResult, Wrap, run


def parallel_files(coverage_file: Path) -> list[Path]:
    """The data files a ``parallel = true`` configuration leaves beside ``coverage_file`` (one per process)."""
    return sorted(coverage_file.parent.glob(f"{coverage_file.name}.*"))


# ``coverage ARGS`` with the repository's configuration read as this tree lays it out:
# - only the ``[paths]`` groups whose first entry (where coverage.py says reports find the files) names something
#   in this tree. pyjwt 2.10's first is ".tox/*/site-packages": combining sent every measured file there,
#   reporting refused a wildcard result, and the build had no coverage;
# - a ``[report] include`` pattern that names the package where tox installs it (python-dotenv 1.0.1's
#   "*/site-packages/dotenv/*") names that package wherever it is ("*/dotenv/*"): the job installs the repository
#   editable, so its code is measured in the tree, and the pattern as written left "No data to report".
# coverage.py has no option for either, hence the patched constructor.
_AS_THIS_TREE = """\
import glob, re, sys
from coverage import cmdline, control
read = control.Coverage.__init__
INSTALLED = re.compile(r"^(?:.*[/\\\\])?(?:site|dist)-packages[/\\\\](?=.*[^*?/\\\\])")
def as_this_tree(self, *args, **kwargs):
    read(self, *args, **kwargs)
    self.config.paths = {k: v for k, v in self.config.paths.items() if v and glob.glob(v[0])}
    if self.config.report_include:
        self.config.report_include = [INSTALLED.sub("*/", p) for p in self.config.report_include]
control.Coverage.__init__ = as_this_tree
sys.exit(cmdline.main(sys.argv[1:]))
"""


def command(
    root: Path, python: str, args: list[str], coverage_file: Path, env: dict[str, str], timeout: float, log: Log,
    wrap: Wrap,
) -> StepResult:  # fmt: skip
    """``coverage ARGS`` on ``coverage_file`` in ``wrap`` (the repo's coverage plugins are its code): ``json``,
    or ``xml`` (Cobertura) for a coverage.py before 5.0, which has no ``json``."""
    argv = wrap([python, "-c", _AS_THIS_TREE, *args])
    return run(argv, cwd=root, env={**env, "COVERAGE_FILE": str(coverage_file)}, timeout=timeout, log=log)


def combine(
    root: Path, python: str, coverage_file: Path, env: dict[str, str], timeout: float, log: Log, wrap: Wrap
) -> StepResult:
    """``coverage combine`` of the parallel data files into ``coverage_file``, as the repo's own CI would before
    reporting."""
    args = ["combine", *map(str, parallel_files(coverage_file))]
    return command(root, python, args, coverage_file, env, timeout, log, wrap)


FAIL_UNDER = 2  # coverage.py's exit status for a total under the repository's ``fail_under``: the report is written


def wrote(step: StepResult) -> bool:
    """Whether a ``coverage json``/``xml`` step wrote its report (pycodestyle's ``fail_under = 93``: exit 2)."""
    return step.returncode in (0, FAIL_UNDER) and not step.timed_out


# What coverage.py measured and cannot report: a file that is not Python (jinja2's templates, run as code compiled
# from them), or no file at all (mako's templates compiled to modules named ``_chs_unicode_py3k_html``).
_UNREPORTABLE = re.compile(
    r"(?:Couldn't parse '(?P<path>[^']+)' as Python source|No source for code: '(?P<gone>[^']+)')"
)


def unreportable(step: StepResult, root: Path) -> list[str]:
    """Measured code coverage.py could not report: files it could not parse or find."""
    matches = _UNREPORTABLE.finditer(f"{step.stdout}\n{step.stderr}")
    found = (_relative(m["path"] or m["gone"], root) for m in matches)
    return [path for path in found if path is not None]


def no_json(step: StepResult) -> bool:
    """Whether ``coverage json`` failed because this coverage.py predates it."""
    return "Unknown command: 'json'" in step.stderr


def load_xml(path: Path, root: Path) -> dict[str, Any] | None:
    """The contract from coverage.py's Cobertura XML, each file's functions read from its source."""
    try:
        text = path.read_text(encoding="utf-8")
        return coverage_formats.from_cobertura(text, root, functions=_function_spans)
    except (OSError, coverage_formats.CoverageFormatError):
        return None


def _function_spans(source: Path) -> list[tuple[str, int, int | None]]:
    return [(name, first, last) for name, (first, last) in symbol_spans(source, classes=False).items()]


def _pct(summary: dict[str, Any], key: str) -> float:
    return round(float(summary.get(key, 0.0)), 2)


def _line_pct(summary: dict[str, Any]) -> float:
    # Line (statement) coverage alone; coverage.py's percent_covered mixes in branches.
    statements = int(summary.get("num_statements", 0))
    return round(100.0 * int(summary.get("covered_lines", 0)) / statements, 2) if statements else 100.0


def _branch_pct(summary: dict[str, Any]) -> float | None:
    return _pct(summary, "percent_branches_covered") if summary.get("num_branches") else None


def symbol_spans(source: Path, classes: bool = True) -> dict[str, tuple[int, int]]:
    """Qualified name → (first line, last line) of every function (and class), as coverage.py names them."""
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    spans: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                if classes or not isinstance(child, ast.ClassDef):
                    spans[name] = (first, child.end_lineno or child.lineno)
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return spans


def _symbols(data: dict[str, Any], source: Path) -> list[dict[str, Any]]:
    spans = symbol_spans(source)
    out = []
    for section, kind in (("functions", "function"), ("classes", "class")):
        for name, sym in (data.get(section) or {}).items():
            if not name:
                continue  # module-level code; the file's own numbers cover it
            summary = sym.get("summary", {})
            start, end = spans.get(name, (None, None))
            out.append(
                {
                    "name": name,
                    "kind": kind,
                    "start_line": sym.get("start_line") or start,
                    "end_line": sym.get("end_line") or end,
                    "statements": int(summary.get("num_statements", 0)),
                    "missing_lines": sorted(sym.get("missing_lines", [])),
                    "line_pct": _line_pct(summary),
                    "branch_pct": _branch_pct(summary),
                }
            )
    return out


def _file(path: str, data: dict[str, Any], root: Path) -> dict[str, Any]:
    summary = data.get("summary", {})
    return {
        "path": path,
        "statements": int(summary.get("num_statements", 0)),
        "missing_lines": sorted(data.get("missing_lines", [])),
        "excluded_lines": sorted(data.get("excluded_lines", [])),
        "num_branches": int(summary.get("num_branches", 0)),
        "missing_branches": [list(b) for b in data.get("missing_branches", [])],
        "line_pct": _line_pct(summary),
        "branch_pct": _branch_pct(summary),
        "symbols": _symbols(data, root / path),
    }


def _relative(path: str, root: Path) -> str | None:
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None  # measured code outside the repository (the runner's plugin, say)


def to_report(raw: dict[str, Any], root: Path) -> dict[str, Any]:
    files, summaries = [], []
    for path, data in sorted((raw.get("files") or {}).items()):
        rel = _relative(path, root)
        if rel is not None:
            files.append(_file(rel, data, root))
            summaries.append(data.get("summary", {}))
    keys = ("num_statements", "covered_lines", "num_branches", "covered_branches")
    totals: dict[str, Any] = {k: sum(int(s.get(k, 0)) for s in summaries) for k in keys}
    if totals["num_branches"]:
        totals["percent_branches_covered"] = 100.0 * totals["covered_branches"] / totals["num_branches"]
    return {
        "line_pct": _line_pct(totals),
        "branch_pct": _branch_pct(totals),
        "statements": int(totals.get("num_statements", 0)),
        "covered_lines": int(totals.get("covered_lines", 0)),
        "num_branches": int(totals.get("num_branches", 0)),
        "covered_branches": int(totals.get("covered_branches", 0)),
        "files": files,
    }


def load(path: Path, root: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return to_report(json.loads(path.read_text(encoding="utf-8")), root)
    except (json.JSONDecodeError, OSError):
        return None
