"""A ``GOCACHEPROG`` for a job's offline steps: the repository's shared build cache read where it is, what the
job compiles written to the job's own.

The offline steps run the repository's tests, which may compile (a test that runs ``go build``) or write the
build cache outright, so they must not write the shared one; copying it into the job instead cost 0.5-1.5 s a job
for the standard library alone, and grows with the cache. The go command asks this program for each action
(``go help gocacheprog``; the protocol is ``cmd/go/internal/cacheprog``): a ``get`` is answered from the shared
cache, whose files the go command only reads, else from the job's; a ``put`` goes to the job's cache. Both
are in the go command's own layout (``XX/<action>-a`` entries, ``XX/<output>-d`` bodies), so the shared cache
stays the one the dependency phase's native go commands write.

Run as ``python cacheprog.py SHARED PRIVATE`` (a script of the standard library only: the sandbox need not see
the runner's packages).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import sys
import tempfile
import time
from typing import IO, Any

ENTRY_SIZE = 2 + 1 + 64 + 1 + 64 + 1 + 20 + 1 + 20 + 1  # "v1 <action> <output> <size> <time>\n"


class DiskLayout:
    """One build cache directory in the go command's layout. Plain ``os`` calls, not pathlib: a ``go vet`` of a
    one-package module asks about 500 times."""

    def __init__(self, root: str) -> None:
        self.root = root

    def path(self, digest: bytes, kind: str) -> str:
        return f"{self.root}/{digest[:1].hex()}/{digest.hex()}-{kind}"

    def get(self, action: bytes) -> dict[str, Any] | None:
        """The entry's output id, size and body path, or None for a miss (absent, malformed or bodiless)."""
        try:
            with open(self.path(action, "a"), "rb") as fh:
                entry = fh.read(ENTRY_SIZE + 1)
        except OSError:
            return None
        fields = entry.split()
        if len(entry) != ENTRY_SIZE or len(fields) != 5 or fields[0] != b"v1" or fields[1] != action.hex().encode():
            return None
        try:
            output, size = bytes.fromhex(fields[2].decode()), int(fields[3])
            body = self.path(output, "d")
            found = os.stat(body)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(found.st_mode) or found.st_size != size:
            return None  # an executable's entry is a directory: only the go command's own cache serves those
        return {"OutputID": _b64(output), "Size": size, "DiskPath": body}

    def put(self, action: bytes, output: bytes, body: bytes) -> str:
        """Store ``body`` as ``output`` and the entry naming it under ``action``; the body's path."""
        if hashlib.sha256(body).digest() != output:
            raise ValueError("the body's digest is not its output id")
        target = self.path(output, "d")
        if not (os.path.isfile(target) and os.path.getsize(target) == len(body)):
            _write(target, body)
        stamp = time.time_ns()
        _write(self.path(action, "a"), f"v1 {action.hex()} {output.hex()} {len(body):20d} {stamp:20d}\n".encode())
        return target


def _write(path: str, data: bytes) -> None:
    """Whole or not at all: another go command of the job may read it meanwhile."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def serve(shared: DiskLayout, own: DiskLayout, requests: IO[str], responses: IO[str]) -> None:
    def say(message: dict[str, Any]) -> None:
        responses.write(json.dumps(message) + "\n")
        responses.flush()

    say({"ID": 0, "KnownCommands": ["get", "put", "close"]})
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        ident, command = request["ID"], request.get("Command")
        action = base64.b64decode(request.get("ActionID") or "")
        try:
            if command == "get":
                say({"ID": ident, **(shared.get(action) or own.get(action) or {"Miss": True})})
            elif command == "put":
                size = int(request.get("BodySize") or 0)
                body = base64.b64decode(json.loads(_next_line(requests))) if size else b""
                output = base64.b64decode(request.get("OutputID") or "")
                say({"ID": ident, "DiskPath": own.put(action, output, body)})
            elif command == "close":
                say({"ID": ident})
                return
            else:
                say({"ID": ident, "Err": f"unknown command {command!r}"})
        except (OSError, ValueError) as exc:
            say({"ID": ident, "Err": str(exc)})


def _next_line(requests: IO[str]) -> str:
    """The next non-blank line: the go command ends each request with a blank one."""
    for line in requests:
        if line.strip():
            return line
    raise ValueError("the go command closed its requests before a put's body")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: cacheprog.py SHARED_GOCACHE JOB_GOCACHE", file=sys.stderr)
        return 2
    serve(DiskLayout(argv[0]), DiskLayout(argv[1]), sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
