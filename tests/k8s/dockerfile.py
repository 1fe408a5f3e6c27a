"""Read a Dockerfile with the stdlib (no container engine here): instructions, ARG defaults, ENV."""

from __future__ import annotations

import re
import shlex


def parse(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs: comments dropped, backslash continuations joined."""
    instructions: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        instructions.append((word.upper(), rest.strip()))
    assert not pending, "dangling line continuation"
    return instructions


def build_args(text: str) -> dict[str, str]:
    """ARG defaults, each with the earlier ARGs it names expanded, as Docker does (`GO_IMAGE=golang:${GO_VERSION}`)."""
    args: dict[str, str] = {}
    for kind, arg in parse(text):
        if kind == "ARG" and "=" in arg:
            name, value = arg.split("=", 1)
            args[name] = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m[1] or m[2], m[0]), value)
    return args


def env_of(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for kind, rest in parse(text):
        if kind == "ENV":
            env.update(dict(part.split("=", 1) for part in shlex.split(rest)))
    return env
