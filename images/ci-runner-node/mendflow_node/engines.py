"""The Node.js a package asks for (``engines.node`` in its package.json; an ``.nvmrc`` or ``.node-version`` pin, as
nvm, fnm and setup-node read them) beside the image's. The image runs its own Node and none is downloaded, so a
request the image does not meet is said, with the release that ran the tests: a package that needs a newer Node
can fail for that alone, and the report should say why.

A range is judged as npm judges it when it warns ``EBADENGINE``: by npm's own ``semver``, loosely, from the npm
beside the image's ``node`` (node-semver's ranges, ``^20.19 || >=22.12`` or ``1.x - 3``, are not worth a second
reading).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

PIN_FILES = (".nvmrc", ".node-version")
# A release pin (v22, 22.11.0); aliases (lts/*, lts/jod, node, stable) name no release to compare.
_RELEASE = re.compile(r"v?(\d+(?:\.\d+){0,2})")
# The image's node prints its version and, given a range, whether it satisfies it.
_SATISFIES = (
    "const path = require('path');"
    "const npm = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');"
    "const range = process.argv[1];"
    "const semver = range && require(path.join(npm, 'node_modules', 'semver'));"
    "const ok = range ? semver.satisfies(process.version, range, { loose: true }) : true;"
    "process.stdout.write(process.version.slice(1) + ' ' + ok);"
)


def unmet(root: Path, manifest: dict[str, Any], env: dict[str, str]) -> list[str]:
    """An advisory per request the image's Node does not meet: the pin file's, then ``engines.node``'s."""
    pin, wanted = _pinned(root), _engines(manifest)
    if pin is None and wanted is None:
        return []
    judged = _judge(wanted, env)
    if judged is None:
        return []
    version, satisfied = judged
    said = []
    if pin is not None and not (version + ".").startswith(pin[1] + "."):
        said.append(f"{pin[0]}:0:0 Node {pin[1]} is pinned: built and tested with Node {version} (none is downloaded)")
    if not satisfied:
        said.append(f"package.json:0:0 engines.node {wanted} excludes Node {version}, which built and tested it")
    return said


def _pinned(root: Path) -> tuple[str, str] | None:
    """The first pin file's name and the release it names, or None (no pin file, or an alias)."""
    for name in PIN_FILES:
        path = root / name
        if path.is_file():
            found = _RELEASE.fullmatch(path.read_text(encoding="utf-8", errors="replace").strip())
            return (name, found.group(1)) if found else None
    return None


def _engines(manifest: dict[str, Any]) -> str | None:
    engines = manifest.get("engines")
    wanted = engines.get("node") if isinstance(engines, dict) else None
    return wanted.strip() if isinstance(wanted, str) and wanted.strip() else None


def _judge(wanted: str | None, env: dict[str, str]) -> tuple[str, bool] | None:
    """The image's Node release and whether it satisfies ``wanted``; None where node or npm's semver cannot say."""
    try:
        said = subprocess.run(
            ["node", "-e", _SATISFIES, wanted or ""], env=env, capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    version, _, satisfied = said.stdout.partition(" ")
    return (version, satisfied == "true") if version else None
