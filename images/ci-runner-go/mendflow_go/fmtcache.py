"""gofmt's verdicts on a repository's files, kept in its cache by each file's content digest, so a warm job runs
gofmt only on files it has not judged yet, as the build cache compiles only changed packages: go-jsonnet 0.22.0's
8.5 MB generated ``astgen/stdast.go`` cost 27 s of gofmt in every job.

gofmt runs beside the tests, which may rewrite the tree: a verdict is kept only of a file gofmt read from a copy
made before any repository code ran, in a place no test can write (``Unseen``); where there is no such place
nothing is kept. The verdicts are keyed by the gofmt binary as well (its path, size and time): another toolchain
may format otherwise. The file holds the verdicts of the last job's tree only, so it never outgrows the
repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

FILE = "gofmt-verdicts.json"


def digest(path: Path) -> str:
    with path.open("rb") as source:
        return hashlib.file_digest(source, "sha256").hexdigest()


def tool_identity(binary: str | None) -> str | None:
    """Which gofmt judges (or golangci-lint converts): its real path, size and modification time; None without
    one."""
    if binary is None:
        return None
    real = Path(binary).resolve()
    stat = real.stat()
    return f"{real}:{stat.st_size}:{stat.st_mtime_ns}"


@dataclass
class Unseen:
    """A module's files no verdict covers yet, copied into ``tree`` (a copy of the sources, at the same paths),
    where gofmt reads them."""

    tree: Path
    # path relative to the module → its digest; None for a symbolic link, copied as one, whose target gofmt reads
    # in its sandbox and of which no verdict is kept
    files: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Verdicts:
    """The repository's kept verdicts (digest → formatted) and this job's, which replace them when it is done."""

    path: Path
    tool: str
    kept: dict[str, bool]
    judged: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def load(cls, cache: Path, tool: str) -> Verdicts:
        """The verdicts kept in ``cache`` by ``tool``; none where the file is missing, unreadable or another
        gofmt's."""
        path = cache / FILE
        try:
            stored = json.loads(path.read_text())
            kept = stored["formatted"] if stored.get("tool") == tool else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            kept = {}
        valid = isinstance(kept, dict) and all(isinstance(v, bool) for v in kept.values())
        return cls(path, tool, kept if valid else {})

    def sort(self, src: Path, module: Path, files: list[Path], tree: Path) -> tuple[list[str], Unseen]:
        """``module``'s files (paths under it) the kept verdicts say gofmt would change, and the rest, unseen,
        copied from ``src`` into ``tree``."""
        unformatted, unseen = [], Unseen(tree)
        for path in files:
            name = path.relative_to(module).as_posix()
            sha = None if path.is_symlink() else digest(path)
            if sha is not None and sha in self.kept:
                self.judged[sha] = self.kept[sha]
                if not self.kept[sha]:
                    unformatted.append(name)
                continue
            unseen.files[name] = sha
            copy = tree / path.relative_to(src)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy, follow_symlinks=False)
        return unformatted, unseen

    def judge(self, unseen: Unseen, batch: list[str], listed: set[str]) -> None:
        """gofmt's verdict on ``batch`` (a run of it that exited 0): each file it ``listed`` would change."""
        for name in batch:
            if (sha := unseen.files[name]) is not None:
                self.judged[sha] = name not in listed

    def save(self) -> None:
        """This job's verdicts, in place of the kept ones, written whole or not at all."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_name(f".{FILE}-{os.getpid()}")
        partial.write_text(json.dumps({"tool": self.tool, "formatted": self.judged}))
        partial.replace(self.path)
