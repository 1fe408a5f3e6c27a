"""Offline generation with Pynguin, in its own uv venv (its pins never touch the repo's or mendflow's).

Bounded three ways per module: Pynguin's search time, its own execution timeouts, and a hard wall-clock
limit on the whole Pynguin process (its assertion generation can otherwise run for many minutes). Assertion
generation is SIMPLE (no mutation analysis). The module under test is imported with a clean ``sys.argv`` so
modules that parse the command line at import do not see Pynguin's arguments. A fixed ``--seed`` (and the
hash salt pinned to it) makes a run reproducible while it ends on iterations rather than on search time;
``--no-xfail`` makes a test that ends in an exception assert it with ``pytest.raises`` instead of being
marked ``xfail`` (which asserts nothing).
"""

from __future__ import annotations

import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from mendflow_runner.proc import Log, Wrap, as_is, run, sandbox

from . import edit, progress

# Runs Pynguin with sys.argv reduced to the program name before the module under test is imported.
# It also pads the stack size of every code object Pynguin instruments: bytecode 0.17 underestimates it for
# some instrumented functions (schema 0.7.8's on CPython 3.11; 3.12 fails outright with "Failed to compute
# stacksize, got negative size"), the interpreter's value stack then overruns its frame, and the worker dies
# later at a random place (a segfault while collecting garbage or tracing) -- Pynguin's "Could not restart
# worker process". A larger co_stacksize only costs a few bytes per frame. Where bytecode's check of each
# instruction's pre- and post-effect fails outright on instrumented code ("got negative size": every function
# of humanize.number on CPython 3.11), the size is computed from net effects, bytecode's own unchecked mode.
PAD_STACK = (
    "import bytecode.cfg as cfg\n"
    "_size = cfg.ControlFlowGraph.compute_stacksize\n"
    "def _padded(self, *args, **kwargs):\n"
    "    try:\n"
    "        size = _size(self, *args, **kwargs)\n"
    "    except RuntimeError:\n"
    "        size = _size(self, *args, **{**kwargs, 'check_pre_and_post': False})\n"
    "    return size + max(32, size)\n"
    "cfg.ControlFlowGraph.compute_stacksize = _padded\n"
)
WRAPPER = (
    "import sys\n" + PAD_STACK + "from pynguin.cli import main\n"
    "args = sys.argv[1:]\n"
    "sys.argv = ['pynguin']\n"
    "sys.exit(main(['pynguin', *args]))\n"
)


def argv(pyn_python: str, project: Path, module: str, out_dir: Path, options: dict[str, Any]) -> list[str]:
    """The Pynguin command line for one module (the bench runs Pynguin alone with exactly this)."""
    return [
        pyn_python,
        "-c",
        WRAPPER,
        "--project-path",
        str(project),
        "--module-name",
        module,
        "--output-path",
        str(out_dir),
        "--maximum-search-time",
        str(int(options.get("search_time", 20))),
        "--maximum-iterations",
        str(options.get("iterations", 1000)),
        "--assertion-generation",
        "SIMPLE",
        "--maximum-test-execution-timeout",
        "2",
        "--maximum-module-execution-timeout",
        "10",
        "--seed",
        str(int(options.get("seed", 0))),
        "--no-xfail",
        "True",
        "--no-rich",
        "--report-dir",  # its statistics CSV, per module: modules searched at once never share it
        str(out_dir / "report"),
    ]


def environment(options: dict[str, Any], pycache: Path) -> dict[str, str]:
    """Pynguin's own variables. The seed alone does not make a run reproducible: Pynguin iterates over sets
    of strings, whose order follows the per-process hash salt, so the salt is pinned to the seed too.

    Jobs run with PYTHONDONTWRITEBYTECODE, so each Pynguin process, and the two it spawns per module (its
    worker and its assertion filter), would compile Pynguin's 2,400 modules from source again: 2.4 s each.
    Their bytecode goes to ``pycache`` instead (never beside the repo's sources), written once per job."""
    return {
        "PYNGUIN_DANGER_AWARE": "1",
        "PYTHONHASHSEED": str(int(options.get("seed", 0)) % 2**32),
        "PYTHONDONTWRITEBYTECODE": "",  # empty is unset, for Python
        "PYTHONPYCACHEPREFIX": str(pycache),
    }


def venv_of(work: Path) -> Path:
    return work / "pynguin-venv"


def install(
    work: Path, python: str, version: str, env: dict[str, str], log: Log, timeout: float, wrap: Wrap = as_is
) -> str | None:
    """Pynguin into its own venv, under ``wrap`` (the dependency phase's: the package index and nothing else)."""
    venv = venv_of(work)
    for command in (
        ["uv", "venv", "--python", python, str(venv)],
        ["uv", "pip", "install", "--python", str(venv / "bin/python"), f"pynguin=={version}"],
    ):
        step = run(wrap(command), cwd=work, env=env, timeout=timeout, log=log)
        if not step.ok:
            log.write(f"pynguin install failed: {step.describe()}")
            shutil.rmtree(venv, ignore_errors=True)  # no half-made venv for the generation step to mistake
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
    """Generated test files by repo path, notes, and the node keys Pynguin itself marked xfail.

    Modules are searched ``workers`` at a time (the job's cores, as the trusted side sized it): one Pynguin
    keeps one core busy, and its search is wall-clock bounded, so a module gets the same search either way.
    Results are merged in module order, so the outcome does not depend on which module finished first."""

    def one(mod: dict[str, Any]) -> tuple[str | None, list[str]]:
        notes: list[str] = []
        return _generate_one(work, src, pyn_python, repo_python, mod, options, env, log, remaining, notes), notes

    with ThreadPoolExecutor(max(1, int(options.get("workers", 1)))) as pool:
        futures = [pool.submit(one, mod) for mod in modules]
        names = {future: str(mod["module"]) for future, mod in zip(futures, modules, strict=True)}
        for done, future in enumerate(as_completed(futures), 1):
            progress.report(done, len(modules), names[future])  # the trusted side's bar moves
    files: dict[str, str] = {}
    notes: list[str] = []
    xfails: set[str] = set()
    for mod, future in zip(modules, futures, strict=True):
        tidy, module_notes = future.result()
        notes += module_notes
        if tidy is not None:
            files[mod["test_path"]] = tidy
            xfails |= {f"{mod['test_path']}::{k}" for k in edit.xfail_tests(tidy)}
    return files, notes, xfails


def _generate_one(
    work: Path,
    src: Path,
    pyn_python: str,
    repo_python: str,
    mod: dict[str, Any],
    options: dict[str, Any],
    env: dict[str, str],
    log: Log,
    remaining: Any,
    notes: list[str],
) -> str | None:
    """Pynguin's tests for one module, tidied; None (and a note saying why) when there are none."""
    search = int(mod.get("search_time", options.get("search_time", 20)))  # the trusted side sizes it per module
    hard = float(options.get("module_timeout", search + 60))
    out_dir = work / "pynguin-out" / mod["module"]
    out_dir.mkdir(parents=True, exist_ok=True)
    project = src / mod.get("project_path", ".")
    # The repo's packages after Pynguin's own, so Pynguin's pins win any clash.
    pythonpath = os.pathsep.join(p for p in (str(project), _site_packages(repo_python)) if p)
    command = argv(pyn_python, project, mod["module"], out_dir, {**options, "search_time": search})
    budget = min(hard, max(5.0, remaining() - 120))  # keep time for the gates
    step = run(
        sandbox(work)(command),  # Pynguin executes the module under test: the repo's code, offline
        cwd=work,
        env={**env, **environment(options, work / "pynguin-pycache"), "PYTHONPATH": pythonpath},
        timeout=budget,
        log=log,
    )
    produced = sorted(out_dir.glob("test_*.py"))
    if step.timed_out:
        notes.append(f"pynguin on {mod['module']} stopped at its hard limit of {budget:.0f} s")
    elif not step.ok and not produced:
        notes.append(f"pynguin on {mod['module']} failed: {step.last_stderr_line()[:300]}")
    if not produced:
        return None
    raw = produced[0].read_text(encoding="utf-8")
    try:
        return edit.tidy_pynguin(raw)
    except SyntaxError as exc:
        notes.append(f"pynguin output for {mod['module']} does not parse: {exc}")
        return None


def python_for_pynguin() -> str:
    return os.environ.get("MENDFLOW_JOB_PYTHON") or sys.executable
