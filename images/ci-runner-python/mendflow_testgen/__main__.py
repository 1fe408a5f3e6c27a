"""Entry point of the builder job (stdlib only; runs on the ci-runner-python image beside mendflow_runner).

Usage: ``python mendflow_testgen.pyz --source SNAPSHOT --candidates JSON --out DIR``

* ``--source``: the commit's .tar.gz snapshot (path or http(s) URL), unpacked safely.
* ``--candidates``: JSON ``{"mode": "files"|"pynguin", "files": {path: text}, "tests_dir": "tests",
  "targets": [{path, symbol, start_line, end_line, missing_lines, missing_branches}], "runs": 5,
  "pynguin": {"version", "search_time", "module_timeout", "seed", "modules": [{"module", "project_path",
  "test_path", "search_time"}]}}`` (a module's own ``search_time`` wins). A test is kept when it runs a line or
  branch the build missed in a targeted file.
* ``--out``: receives ``result.json`` (kept, dropped, final files, notes, feedback, error), ``builder.log``.

The repository's dependencies are installed exactly as the CI runner does (its own venv, uv cache shared), and
Pynguin into a venv of its own; a job split at that phase (``mendflow_runner.handoff``) installs both in its
first pod and runs the rest offline in the second.
Environment: ``MENDFLOW_JOB_TIMEOUT_SEC`` (whole budget), ``MENDFLOW_JOB_PYTHON`` (interpreter for venvs).
Exit code 0 whenever result.json was written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import urllib.request
from pathlib import Path
from typing import Any

from mendflow_runner import deps, handoff, scmversion, unpack
from mendflow_runner.proc import Log

from . import edit, pyn
from .gates import Drop, Gates, Outcome

RESERVE_SEC = 15.0


def _read_candidates(location: str) -> dict[str, Any]:
    if location.startswith(("http://", "https://")):
        with urllib.request.urlopen(location, timeout=60) as resp:
            return dict(json.loads(resp.read()))
    return dict(json.loads(Path(location.removeprefix("file://")).read_text(encoding="utf-8")))


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


HANDED_OVER: dict[str, Any] = {}  # the dependency pod of a split job: its archive, not a result, is the output


def build(args: argparse.Namespace, log: Log) -> dict[str, Any]:
    started = time.monotonic()
    budget = float(os.environ.get("MENDFLOW_JOB_TIMEOUT_SEC", "900")) - RESERVE_SEC
    phase = handoff.phase()
    spec = _read_candidates(args.candidates)
    work = Path(args.out).resolve().parent / "work"
    src, venv = work / "src", work / "venv"
    work.mkdir(parents=True, exist_ok=True)
    unpack.unpack(unpack.fetch(args.source, work), src)
    python = pyn.python_for_pynguin()
    env = dict(os.environ)
    env.update(scmversion.overrides(src, env))
    pynguin = spec.get("mode") == "pynguin"
    environments = [src, venv, pyn.venv_of(work)]  # the source tree as the install left it
    if phase == handoff.OFFLINE:
        started -= handoff.spent(handoff.restore(work, environments), budget)
    deadline = started + budget

    def remaining() -> float:
        return max(1.0, deadline - time.monotonic())

    if phase != handoff.OFFLINE:
        installer = deps.Installer(src, venv, python, env, log)
        try:
            installer.install(remaining)
        except deps.DependencyError as exc:
            return {"error": f"installing the repository's dependencies failed: {exc}"}
        if pynguin:
            version = str((spec.get("pynguin") or {}).get("version", "0.48.0"))
            pyn.install(work, python, version, env, log, remaining(), installer.wrap)
    if phase == handoff.DEPENDENCIES:
        handoff.pack(work, environments, handoff.measures(started, started))
        return HANDED_OVER
    gates = Gates(src, str(venv / "bin/python"), env, log, work, remaining, int(spec.get("runs", 5)), pynguin)
    files = dict(spec.get("files") or {})
    pre_drops: list[Drop] = []
    notes: list[str] = []
    if pynguin:
        files, notes, xfails = _pynguin(spec, work, src, str(venv / "bin/python"), env, log, remaining)
        for node in sorted(xfails):
            path, key = node.split("::", 1)
            files[path] = edit.remove_functions(files[path], {key})
            pre_drops.append(Drop(node, "fails", "Pynguin marked it xfail: it ends in an unexpected exception"))
    targets = list(spec.get("targets") or [])
    # Files mode reports per gated file; Pynguin mode has reported per module already (its unit).
    outcome: Outcome = gates.run_all(files, spec.get("tests_dir", "tests"), targets, not pynguin)
    outcome.dropped[:0] = pre_drops
    outcome.notes[:0] = notes
    result = outcome.to_dict()
    result["generated"] = files
    return result


def _pynguin(
    spec: dict[str, Any],
    work: Path,
    src: Path,
    repo_python: str,
    env: dict[str, str],
    log: Log,
    remaining: Any,
) -> tuple[dict[str, str], list[str], set[str]]:
    options = dict(spec.get("pynguin") or {})
    pyn_python = pyn.venv_of(work) / "bin/python"
    if not pyn_python.exists():
        return {}, ["pynguin could not be installed; see builder.log"], set()
    return pyn.generate(
        work, src, str(pyn_python), repo_python, list(options.get("modules") or []), options, env, log, remaining
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mendflow_testgen")
    parser.add_argument("--source", required=True)
    parser.add_argument("--candidates", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out / "builder.log")
    try:
        result = build(args, log)
    except handoff.HandoffError as exc:
        result = {"error": str(exc)}
    except Exception as exc:  # the builder's own bug or a bad snapshot: still say so in result.json
        log.write(traceback.format_exc())
        result = {"error": f"{type(exc).__name__}: {exc}"}
    if result is HANDED_OVER:  # a result.json from here could be taken for the offline pod's
        log.write("dependencies packed for the offline phase")
        return 0
    _write_atomic(out / "result.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
