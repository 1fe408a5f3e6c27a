"""borp, node:test's runner with TypeScript and c8 (the fastify family's), run the way mendflow runs ``node --test``.

mendflow runs borp itself, with the script's options, and adds its own reporter and coverage; it leaves out what it
brings itself: borp's ``-C`` points NODE_V8_COVERAGE at a directory of its own, which it deletes once it has
reported (@fastify/sensible 6.0.6: no coverage), its reporters print what mendflow does not read, its thresholds
(``--check-coverage --lines 100``) judge the coverage, not the commit, and ``--watch`` never ends. Its coverage
excludes (``-X``) are the repository's word on what coverage measures: mendflow's report honours them.

borp appends the options of its ``.borp.yaml`` to its command line, so the same holds there: the job has borp read
a copy without its ``coverage`` (and, for a selection of tests, its ``files``, which would run them all).
"""

from __future__ import annotations

import re
from pathlib import Path

from . import options

_VALUED = {"-p", "--pattern", "-c", "--concurrency", "-t", "--timeout", "-i", "--ignore", "-P", "--post-compile"}
_EXCLUDE = {"-X", "--coverage-exclude"}
_LEFT_VALUED = {"-r", "--reporter", "--lines", "--branches", "--functions", "--statements"}
_LEFT = {"-C", "--coverage", "--check-coverage", "--coverage-html", "-w", "--watch", *_LEFT_VALUED}
_CONFIGS = (".borp.yaml", ".borp.yml")  # the first borp finds, in the directory it runs in
_TOP_LEVEL_KEY = re.compile(r"^([\w-]+)\s*:")


def words(args: list[str]) -> tuple[list[str], list[str], list[str]]:
    """borp's arguments as mendflow runs them: the options it keeps (each with its value), the files (positionals)
    and the coverage excludes (``-X``)."""
    read = list(options.read(args, _VALUED | _EXCLUDE | _LEFT_VALUED))
    kept = [w for word in read if not word.positional and word.name not in _EXCLUDE | _LEFT for w in word.written]
    files = [word.value for word in read if word.positional]
    return kept, files, [word.value for word in read if word.name in _EXCLUDE]


def config_env(root: Path, out: Path, selecting: bool) -> dict[str, str]:
    """``BORP_CONF_FILE`` naming a copy of the package's borp configuration, in ``out``, without what mendflow
    leaves out; {} where the package has none."""
    found = next((root / name for name in _CONFIGS if (root / name).is_file()), None)
    if found is None:
        return {}
    left = {"coverage", "reporters", *(["files"] if selecting else [])}
    copy = out / "borp.yaml"
    copy.write_text(without_keys(found.read_text(encoding="utf-8", errors="replace"), left), encoding="utf-8")
    return {"BORP_CONF_FILE": str(copy)}


def without_keys(yaml: str, keys: set[str]) -> str:
    """``yaml`` without the top-level entries ``keys``: each from its key's line to the next top-level key (what
    lies between is the entry's, indented or not: a list may start at column 0); ``{}`` where no entry is left
    (borp reads an empty document as null, and fails on it)."""
    kept, dropping, left = [], False, False
    for line in yaml.splitlines(keepends=True):
        if found := _TOP_LEVEL_KEY.match(line):
            dropping = found[1] in keys
            left = left or not dropping
        if not dropping:
            kept.append(line)
    return "".join(kept) if left else "{}\n"
