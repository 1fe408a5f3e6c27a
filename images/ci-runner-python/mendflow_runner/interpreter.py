"""Which Python the repository's venv gets: the one it asks for (``.python-version``, ``requires-python``) among
those present, the runner's own when it fits; when none fits, a deterministic error that says so.

Requests go to uv (``uv venv --python``), which knows how to find interpreters; only the question "does the
runner's own interpreter fit ``requires-python``" is answered here, with PEP 440's comparison of release
numbers (pre-releases and local versions do not occur in an interpreter's ``X.Y.Z``).
"""

from __future__ import annotations

import re
from pathlib import Path

from . import repo_config

_CLAUSE = re.compile(r"^\s*(?P<op>~=|===|==|!=|<=|>=|<|>)\s*(?P<version>[\d.]+(?:\.\*)?)\s*$")


def requests(root: Path) -> tuple[str | None, str | None]:
    """What the repository asks for: its ``.python-version`` pin (a preference) and ``requires-python`` (what it
    supports)."""
    pin = None
    path = root / ".python-version"
    if path.is_file():
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()]
        pin = next((ln for ln in lines if ln and not ln.startswith("#")), None)
    spec = repo_config.pyproject(root).get("project", {}).get("requires-python")
    return pin, spec.strip() if isinstance(spec, str) and spec.strip() else None


def fits(version: tuple[int, ...], request: str) -> bool:
    """Whether an interpreter of ``version`` satisfies ``request``: a specifier set (``>=3.9,<4``) or a plain
    version pin (``3.11``, as in ``.python-version``). An unreadable request fits (uv will judge it)."""
    if re.fullmatch(r"\d+(?:\.\d+)*", request.strip()):
        want = tuple(int(n) for n in request.strip().split("."))
        return version[: len(want)] == want
    clauses = [c for c in request.split(",") if c.strip()]
    matches = [_CLAUSE.match(c) for c in clauses]
    return all(m is None or _holds(version, m["op"], m["version"]) for m in matches)


def _holds(version: tuple[int, ...], op: str, text: str) -> bool:
    want = tuple(int(n) for n in text.removesuffix(".*").split("."))
    if text.endswith(".*"):  # ==3.11.* / !=3.8.*: a prefix match
        same = version[: len(want)] == want
        return not same if op == "!=" else same
    size = max(len(version), len(want))
    have, target = _padded(version, size), _padded(want, size)
    if op == "~=":  # ~=3.8: >=3.8 and ==3.*
        return have >= target and version[: len(want) - 1] == want[:-1]
    return {
        "==": have == target,
        "===": have == target,
        "!=": have != target,
        "<=": have <= target,
        ">=": have >= target,
        "<": have < target,
        ">": have > target,
    }[op]


def _padded(version: tuple[int, ...], size: int) -> tuple[int, ...]:
    return version + (0,) * (size - len(version))
