"""``mendflow plan``: a BuildReport (+ a plan) → a TestSpec file, offline or with the configured LLM."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Table

from mendflow.cli.app import app
from mendflow.cli.common import repo_location
from mendflow.contracts import BuildReport, TestSpec
from mendflow.errors import InputError
from mendflow.settings import get_settings


def read_json_file(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such {what} file", hint="check the path") from exc
    except OSError as exc:  # a directory, no permission
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", hint=f"pass the {what} file") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not JSON: {exc}", hint=f"pass the {what} file mendflow wrote") from exc


def read_model(path: Path, model: type[BaseModel], what: str) -> Any:
    try:
        return model.model_validate(read_json_file(path, what))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        # The user's file, so bad input (exit 2), though the words are the contract's.
        raise InputError(
            f"{path} is not a valid {model.__name__}: {where}: {err['msg']}",
            hint=f"pass a {what} file written by this version of mendflow",
        ) from exc


def write_atomic(path: Path, text: str) -> None:
    """Temp file beside the target, then rename: a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}", hint="choose another --out") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def spec_table(spec: TestSpec) -> Table:
    table = Table(title=f"TestSpec {spec.id} ({spec.planner}, ~{spec.estimated_tokens} tokens)")
    for column in ("target", "priority", "line %", "cases"):
        table.add_column(column, justify="left" if column == "target" else "right")
    for t in spec.targets:
        n = sum(c.target_path == t.ref for c in spec.cases)
        table.add_row(t.ref, t.priority.value, f"{t.line_pct:.1f}", str(n))
    return table


@app.command("plan")
def plan(
    report: Annotated[Path, typer.Option(help="BuildReport JSON (B1's report.json).")],
    plan_file: Annotated[Path | None, typer.Option("--plan", help="The change's plan JSON (steps).")] = None,
    repo: Annotated[str, typer.Option(help="The repository the report was built from (path or URL).")] = ".",
    out: Annotated[Path, typer.Option(help="Where to write the TestSpec.")] = Path("testspec.json"),
    offline: Annotated[bool, typer.Option(help="Plan without the LLM even when one is configured.")] = False,
) -> None:
    """Plan the missing tests of a build: which functions, which cases; writes a TestSpec."""
    from mendflow.plan import plan_tests  # late: keeps `mendflow --help` fast

    settings = get_settings()  # a bad setting is reported before any work
    location = repo_location(repo)
    build = read_model(report, BuildReport, "build report")
    plan_data = read_json_file(plan_file, "plan") if plan_file else None
    if plan_data is not None and not isinstance(plan_data, dict):
        raise InputError(f"{plan_file} must hold a JSON object", hint='e.g. {"steps": ["..."]}')
    spec = plan_tests(build, location, plan_data, settings, use_llm=False if offline else None)
    write_atomic(out, spec.model_dump_json(indent=2) + "\n")
    console = Console(stderr=True)
    console.print(spec_table(spec))
    console.print(f"wrote {out}: {len(spec.cases)} case(s) for {len(spec.targets)} target(s)", highlight=False)
