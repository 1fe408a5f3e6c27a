"""cargo's JSON messages (``--message-format=json``) read into ``path:line:col CODE message`` findings, the compile
errors of dependencies, and the test binaries a build made."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TestBinary:
    executable: str
    source: str  # the target's root source file, relative to the workspace: src/lib.rs, tests/it.rs
    kind: str  # lib, bin, test, bench, example
    name: str  # the target's (crate's) name, as ``Doc-tests NAME`` says it


def _messages(text: str) -> Iterator[dict[str, Any]]:
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            yield value


def diagnostics(text: str, root: Path, levels: tuple[str, ...] = ("error",)) -> list[str]:
    """The compiler's (or clippy's) diagnostics of ``levels`` at their primary span in the workspace, once each
    (a lib and its test build report the same warning twice)."""
    found: dict[str, None] = {}
    for event in _messages(text):
        message = event.get("message") if event.get("reason") == "compiler-message" else None
        if not isinstance(message, dict) or message.get("level") not in levels:
            continue
        span = next((s for s in message.get("spans") or [] if s.get("is_primary")), None)
        if span is None:
            continue
        path = _relative(str(span.get("file_name") or ""), root)
        if path is None:
            continue
        code = (message.get("code") or {}).get("code") or message["level"]
        text_ = " ".join(str(message.get("message") or "").split())
        found[f"{path}:{span.get('line_start', 0)}:{span.get('column_start', 0)} {code} {text_}"] = None
    return list(found)


def dependency_errors(text: str, root: Path) -> list[str]:
    """The compile errors of packages outside the workspace, once each, as ``NAME VERSION (a dependency) does not
    compile: MESSAGE (FILE:LINE)``, the file relative to that package: paste 1.0.15's dev-dependency
    ``paste-test-suite`` 0.0.0 on crates.io is a placeholder whose lib.rs is ``@``, an error ``diagnostics`` leaves
    out."""
    found: dict[str, None] = {}
    for event in _messages(text):
        message = event.get("message") if event.get("reason") == "compiler-message" else None
        if not isinstance(message, dict) or message.get("level") != "error":
            continue
        span = next((s for s in message.get("spans") or [] if s.get("is_primary")), None)
        file_name = str((span or {}).get("file_name") or "")
        if span is None or _relative(file_name, root) is not None:
            continue
        found[_dependency_error(event, message, span)] = None
    return list(found)


def _dependency_error(event: dict[str, Any], message: dict[str, Any], span: dict[str, Any]) -> str:
    package = Path(str(event.get("manifest_path") or "")).parent
    file_name = str(span.get("file_name") or "")
    where = f"{_relative(file_name, package) or file_name}:{span.get('line_start', 0)}"
    said = " ".join(str(message.get("message") or "").split())
    return f"{_package_name(str(event.get('package_id') or ''))} (a dependency) does not compile: {said} ({where})"


def _package_name(package_id: str) -> str:
    """``NAME VERSION`` from cargo's package id, ``registry+URL#NAME@VERSION`` (``path+file:///DIR#VERSION`` when the
    name is the directory's); an id in older cargo's words (``NAME VERSION (SOURCE)``) as it is."""
    if "#" not in package_id:
        return package_id
    source, _, fragment = package_id.partition("#")
    name, _, version = fragment.rpartition("@")
    return f"{name or source.rstrip('/').rsplit('/', 1)[-1]} {version}"


# cargo's closing line after the errors it printed: "could not compile … due to 2 previous target resolution errors"
_SUMMARY = re.compile(r"due to \d+ previous (?:[\w ]+ )?errors?\b")


def cargo_error(text: str) -> str:
    """Cargo's own ``error:`` lines that say what is wrong (log 0.4.22's manifest names a ``tests/integration.rs``
    its published crate leaves out: ``can't find integration-test `integration` at path `…/tests/integration.rs```),
    else its last one, a summary (``could not compile `paste-test-suite` (lib) due to 1 previous error``), else the
    last line that is not one of its JSON messages (``{"reason":"build-finished",...}`` says nothing)."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("{")]
    errors = [line for line in lines if line.startswith("error")]
    causes = [line for line in errors if not _SUMMARY.search(line)]
    return "; ".join(list(dict.fromkeys(causes))[:3]) if causes else (errors or lines or [""])[-1]


def compiled_anew(text: str) -> bool:
    """Whether cargo compiled a unit (rather than finding every one fresh)."""
    return any(e.get("reason") == "compiler-artifact" and e.get("fresh") is False for e in _messages(text))


def test_binaries(text: str, root: Path) -> list[TestBinary]:
    """The test executables ``cargo test --no-run`` built, with the source each target starts from."""
    binaries = []
    for event in _messages(text):
        if event.get("reason") != "compiler-artifact" or not event.get("executable"):
            continue
        if not (event.get("profile") or {}).get("test"):
            continue
        target = event.get("target") or {}
        source = _relative(str(target.get("src_path") or ""), root) or str(target.get("name") or "")
        kind = (target.get("kind") or ["?"])[0]
        binaries.append(TestBinary(str(event["executable"]), source, kind, str(target.get("name") or "")))
    return binaries


def _relative(name: str, root: Path) -> str | None:
    path = Path(name)
    if not path.is_absolute():
        return path.as_posix() if ".." not in path.parts else None
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None
