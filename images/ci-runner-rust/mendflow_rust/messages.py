"""cargo's JSON messages (``--message-format=json``) read into ``path:line:col CODE message`` findings and the
test binaries a build made."""

from __future__ import annotations

import json
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
