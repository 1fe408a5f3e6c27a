"""Whether node-tap measures every suite of a package's test script with its own nyc.

node-tap 13 to 17 runs its test files under nyc unless told not to, and leaves istanbul's data in
``.nyc_output``, which the coverage step reports with that nyc. V8's data of the same processes, which mendflow
would otherwise have Node write, is then written for nothing: it cost pino-abstract-transport 2.0.0's `npm test`
2 s of 8.7, most of it the TypeScript compiler that tsd runs after tap. tap 12 measures only when asked, and
tap 18 measures with V8 itself, into ``.tap/coverage``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from . import command
from .project import Project

_WITH_NYC = range(13, 18)  # the node-tap majors that measure with nyc unless told not to
_TURNED_OFF = {"--no-coverage", "--no-cov"}
# .taprc is YAML (or JSON, its subset): `coverage: false`, `cov: false` or `no-coverage: true` turns coverage off;
# `check-coverage: false` does not.
_TURNED_OFF_IN_TAPRC = re.compile(
    r"""(?<![\w-])["']?(?: (?:cov|coverage)["']?\s*:\s*false | no-cov(?:erage)?["']?\s*:\s*true )\b""", re.X
)
_OFF_SAYS = (("coverage", False), ("cov", False), ("no-coverage", True))  # in package.json's `tap` field


def measures_every_suite(proj: Project) -> bool:
    """The test script's suites (through the scripts it runs, and ``npm test``'s hooks) are all node-tap's, at a
    version that measures with nyc, with coverage left on on their command lines and in tap's configuration."""
    if proj.package_major("tap") not in _WITH_NYC or proj.bin("nyc") is None or _configured_off(proj):
        return False
    found: list[list[str]] = []
    for name in (hook for hook in command.NPM_TEST_HOOKS if hook in proj.scripts):
        if (suites := command.suites(proj.scripts[name], proj.scripts)) is None:
            return False
        found += suites
    return bool(found) and all(_measuring_tap(suite) for suite in found)


def _measuring_tap(suite: list[str]) -> bool:
    return PurePosixPath(suite[0]).name == "tap" and not _TURNED_OFF & set(suite)


def _configured_off(proj: Project) -> bool:
    """package.json's ``tap`` field or ``.taprc`` turns coverage off."""
    own = proj.manifest.get("tap")
    if isinstance(own, dict) and any(own.get(key) is said for key, said in _OFF_SAYS):
        return True
    try:
        return bool(_TURNED_OFF_IN_TAPRC.search((proj.root / ".taprc").read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False
