"""Offline generation with Pynguin, in its own uv venv (its pins never touch the repo's or mendflow's).

Bounded three ways per module: Pynguin's search time, its own execution timeouts, and a hard wall-clock
limit on the whole Pynguin process (its assertion generation can otherwise run for many minutes). Assertion
generation is SIMPLE (no mutation analysis). The module under test is imported with a clean ``sys.argv`` so
modules that parse the command line at import do not see Pynguin's arguments.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mendflow_runner.proc import Log, run

from . import edit

# Runs Pynguin with sys.argv reduced to the program name before the module under test is imported.
_WRAPPER = (
    "import sys\n"
    "from pynguin.cli import main\n"
    "args = sys.argv[1:]\n"
    "sys.argv = ['pynguin']\n"
    "sys.exit(main(['pynguin', *args]))\n"
)


def install(work: Path, python: str, version: str, env: dict[str, str], log: Log, timeout: float) -> str | None:
    venv = work / "pynguin-venv"
    for argv in (
        ["uv", "venv", "--python", python, str(venv)],
        ["uv", "pip", "install", "--python", str(venv / "bin/python"), f"pynguin=={version}"],
    ):
        step = run(argv, cwd=work, env=env, timeout=timeout, log=log)
        if not step.ok:
            log.write(f"pynguin install failed: {step.describe()}")
            return None
    return str(venv / "bin/python")


def _site_packages(venv_python: str) -> str:
    lib = Path(venv_python).parent.parent / "lib"
    found = sorted(lib.glob("python3*/site-packages"))
    return str(found[0]) if found else ""


def generate(
    work: Path,
    src: Path,
    pyn_python: str,
    repo_python: str,
    modules: list[dict[str, Any]],
    options: dict[str, Any],
    env: dict[str, str],
    log: Log,
    remaining: Any,
) -> tuple[dict[str, str], list[str], set[str]]:
    """Generated test files by repo path, notes, and the node keys Pynguin itself marked xfail."""
    files: dict[str, str] = {}
    notes: list[str] = []
    xfails: set[str] = set()
    search = int(options.get("search_time", 20))
    hard = float(options.get("module_timeout", search + 60))
    for mod in modules:
        out_dir = work / "pynguin-out" / mod["module"]
        out_dir.mkdir(parents=True, exist_ok=True)
        project = src / mod.get("project_path", ".")
        # The repo's packages after Pynguin's own, so Pynguin's pins win any clash.
        pythonpath = os.pathsep.join(p for p in (str(project), _site_packages(repo_python)) if p)
        argv = [
            pyn_python,
            "-c",
            _WRAPPER,
            "--project-path",
            str(project),
            "--module-name",
            mod["module"],
            "--output-path",
            str(out_dir),
            "--maximum-search-time",
            str(search),
            "--maximum-iterations",
            str(options.get("iterations", 1000)),
            "--assertion-generation",
            "SIMPLE",
            "--maximum-test-execution-timeout",
            "2",
            "--maximum-module-execution-timeout",
            "10",
            "--no-rich",
        ]
        budget = min(hard, max(5.0, remaining() - 120))  # keep time for the gates
        step = run(
            argv,
            cwd=work,
            env={**env, "PYNGUIN_DANGER_AWARE": "1", "PYTHONPATH": pythonpath},
            timeout=budget,
            log=log,
        )
        produced = sorted(out_dir.glob("test_*.py"))
        if step.timed_out:
            notes.append(f"pynguin on {mod['module']} stopped at its hard limit of {budget:.0f} s")
        elif not step.ok and not produced:
            notes.append(f"pynguin on {mod['module']} failed: {step.last_stderr_line()[:300]}")
        if not produced:
            continue
        raw = produced[0].read_text(encoding="utf-8")
        try:
            tidy = edit.tidy_pynguin(raw)
        except SyntaxError as exc:
            notes.append(f"pynguin output for {mod['module']} does not parse: {exc}")
            continue
        files[mod["test_path"]] = tidy
        xfails |= {f"{mod['test_path']}::{k}" for k in edit.xfail_tests(tidy)}
    return files, notes, xfails


def python_for_pynguin() -> str:
    return os.environ.get("MENDFLOW_JOB_PYTHON") or sys.executable
