"""Numeric identities for local jobs: a uid of its own per job, a group of its own per repository's cache.

Jobs that share a uid can read and signal each other; with one uid per job they cannot. A repository's
dependency cache is shared by that repository's jobs (each with its own uid) through a group only they get.

Ids come from ``settings.sandbox.job_ids_start`` on (``job_ids_count`` of them), above any account's, and
are claimed with a file under ``BASE/ids`` (root's, 0700) created with ``O_EXCL``: two launchers, even two
processes, never hand out the same id. A job's claim goes with the job (``release``, or ``mendflow reap``);
a repository's stays as long as its cache.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

CLAIM_TRIES = 64
JOB_PREFIX = "job "
SCOPE_PREFIX = "scope "


class IdsExhaustedError(OSError):
    """No free id after many tries: the range is (nearly) full of claims."""


class IdClaims:
    """Claims on ids in ``[start, start + count)``, one file per id under ``root``."""

    def __init__(self, root: Path, start: int, count: int) -> None:
        self.root, self.start, self.count = root, start, count

    def claim(self, owner: str) -> int:
        """A free id, claimed for ``owner`` (``job <job id>`` or ``scope <cache key>``); ``root`` exists (the
        launcher makes it, root's, with its base)."""
        for _ in range(CLAIM_TRIES):
            number = self.start + secrets.randbelow(self.count)
            try:
                fd = os.open(self.root / str(number), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w") as claim:
                claim.write(owner)
            return number
        raise IdsExhaustedError(
            f"no free job id in {self.start}..{self.start + self.count - 1} after {CLAIM_TRIES} tries; "
            f"run `mendflow reap` or widen MENDFLOW_SANDBOX__JOB_IDS_COUNT"
        )

    def claim_for_job(self, job_id: str) -> int:
        return self.claim(f"{JOB_PREFIX}{job_id}")

    def release(self, number: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.root / str(number)).unlink()

    def release_scope(self, number: int, key: str) -> None:
        """Release ``number`` if it is the group of the cache ``key`` (an evicted cache's)."""
        with contextlib.suppress(OSError):
            if (self.root / str(number)).read_text() == f"{SCOPE_PREFIX}{key}":
                self.release(number)

    def jobs(self) -> Iterator[tuple[int, str]]:
        """(id, job id) of every job's claim."""
        for entry in self.root.iterdir() if self.root.is_dir() else ():
            with contextlib.suppress(OSError, ValueError):
                owner = entry.read_text()
                if owner.startswith(JOB_PREFIX):
                    yield int(entry.name), owner.removeprefix(JOB_PREFIX)


def processes_of(uid: int) -> list[int]:
    """Every process whose real uid is ``uid``: with a uid per job, all that is left of that job."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("Uid:"):
                    if int(line.split()[1]) == uid:
                        found.append(int(entry.name))
                    break
    return found


SHARED_TEMP_DIRS = (Path("/tmp"), Path("/dev/shm"), Path("/var/tmp"))


def files_of(uid: int, dirs: tuple[Path, ...] = SHARED_TEMP_DIRS) -> list[Path]:
    """What ``uid`` left at the top of the world-writable temp dirs (a file, a socket, a whole tree)."""
    found = []
    for directory in dirs:
        with contextlib.suppress(OSError):
            for entry in directory.iterdir():
                with contextlib.suppress(OSError):
                    if entry.lstat().st_uid == uid:
                        found.append(entry)
    return found
