"""Key rules shared by every store backend, so a key means the same thing on disk and in S3."""

from __future__ import annotations

from mendflow.errors import StoreError

# Reserved for in-flight writes (FileStore temp files, S3Store '.tmp/' keys); listing hides them.
TMP_MARKER = ".tmp"

_KEY_HINT = "use a relative key of '/'-separated names, e.g. 'repo/<sha>/B1/1/report.json'"


def validate_key(key: str) -> str:
    """Return ``key`` if it is a safe relative key; raise StoreError naming the problem otherwise."""
    problem = _key_problem(key)
    if problem:
        raise StoreError(f"invalid artefact key {key!r}: {problem}", hint=_KEY_HINT)
    return key


def normalize_prefix(prefix: str) -> str:
    """'' stays '' (everything); any other prefix names a directory and gains one trailing '/'."""
    stripped = prefix.rstrip("/")
    if not stripped:
        return ""
    validate_key(stripped)
    return stripped + "/"


def _key_problem(key: str) -> str | None:
    if not key:
        return "it is empty"
    if "\\" in key:
        return "backslashes are not allowed"
    if key.startswith("/"):
        return "absolute keys are not allowed"
    if any(ord(ch) < 32 or ch == "\x7f" for ch in key):
        return "control characters are not allowed"
    for part in key.split("/"):
        if part in ("", ".", ".."):
            return "empty, '.' and '..' segments are not allowed"
        if part.startswith(TMP_MARKER):
            return f"segments starting with {TMP_MARKER!r} are reserved for in-flight writes"
    return None
