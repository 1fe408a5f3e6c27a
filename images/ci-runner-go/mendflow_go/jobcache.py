"""An offline go command's own build cache: a link to each entry of the repository's shared cache, beside which
the go command writes whatever it compiles.

The offline steps run the repository's tests, which may compile (a test that runs ``go build``) or write the
build cache outright, so they must not write the shared one: their sandbox binds it read-only, and their
``GOCACHE`` is their own. The go command reads its cache with plain file opens, so a symbolic link per entry
(``XX/<action>-a``, ``XX/<output>-d``) serves the shared entry at native speed; a new entry is a new file beside
the links. In bubblewrap the links are made in the sandbox's own ``/tmp``, a tmpfs, before each go command
(0.05-0.1 s for the standard library seed and a module's own 4,000 entries): thousands of links on the disk
cost 0.1 s when it is idle and up to 4 s while a previous job's files are written back. Without bubblewrap they
are made once per job in its workspace. The go command writes an existing entry only to repair a corrupt one:
against the read-only binding that write fails, and it goes on with what it compiled.

Before that, a ``GOCACHEPROG`` answered each lookup from either cache: about 0.1 s of round trips per go
command (0.6-0.7 s of go-cmp 0.7.0's warm job); a copy of the shared cache cost 0.5-1.5 s a job.

Run as ``python jobcache.py SHARED OWN COMMAND...`` (a script of the standard library only: the sandbox need not
see the runner's packages): OWN is made, if it is not there yet, then COMMAND runs in this process's place.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def link_shared(shared: Path, own: Path) -> int:
    """A link in ``own`` (a directory) to each of ``shared``'s entries, in the same layout; how many it made."""
    linked = 0
    with os.scandir(shared) as subdirs:
        for subdir in subdirs:
            if not subdir.is_dir(follow_symlinks=False):
                continue  # README, trim.txt, testexpire.txt: the go command keeps its own
            here = own / subdir.name
            here.mkdir(exist_ok=True)
            with os.scandir(subdir.path) as entries:
                for entry in entries:
                    os.symlink(entry.path, here / entry.name)
                    linked += 1
    return linked


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: jobcache.py SHARED_GOCACHE OWN_GOCACHE COMMAND...", file=sys.stderr)
        return 2
    shared, own = Path(argv[0]), Path(argv[1])
    if not own.exists():
        made = own.with_name(f".{own.name}-{os.getpid()}")
        made.mkdir(parents=True)
        if shared.is_dir():
            link_shared(shared, made)
        try:
            made.rename(own)
        except OSError:  # another go command of the job made it first
            if not own.is_dir():
                raise
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
