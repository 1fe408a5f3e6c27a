"""Caches an image builds ahead of its jobs, made once per toolchain by the local launcher (the image's build
makes them in a pod's image: the Go image's Dockerfile).

Why: the Go image's standard library build. A repository's first job would compile it into that repository's
cache (20 s to a minute and more on two cores); built once from the toolchain alone, by the trusted side, it
starts every new repository's cache (``mendflow_go.warm``). The build runs the image's own module
(``python -m <module> TARGET``) with the host's toolchain and a clean environment, as root would build the image.
A seed that fails to build is remembered and skipped: jobs then compile what they need, as before.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mendflow.jobcode import IMAGE_SEEDS, IMAGE_TOOLS

log = logging.getLogger(__name__)
COMPLETE, FAILED = ".complete", ".failed"
SEED_TIMEOUT_SEC = 1800


def seed_env(image: str, toolchains: Path, tool_dirs: list[str], python: Path, runner: Path) -> dict[str, str]:
    """The variable that points ``image``'s jobs at its seed, built now if this toolchain has none; {} when the
    image has no seed or it could not be built."""
    if image not in IMAGE_SEEDS:
        return {}
    module, variable = IMAGE_SEEDS[image]
    target = toolchains / f"seed-{image}-{_stamp(image, module, runner)}"
    if not (target / COMPLETE).is_file():
        with _locked(toolchains / ".seeds.lock"):
            if not (target / COMPLETE).is_file() and not target.with_suffix(FAILED).exists():
                _build(target, module, tool_dirs, python, runner)
    return {variable: str(target)} if (target / COMPLETE).is_file() else {}


def _stamp(image: str, module: str, runner: Path) -> str:
    """What a seed depends on: the toolchain's binaries (a new one makes a new seed) and the module building it."""
    parts = [(runner / (module.replace(".", "/") + ".py")).read_bytes()]
    for tool in IMAGE_TOOLS.get(image, ()):
        found = shutil.which(tool)
        if found is not None:
            info = Path(found).resolve().stat()
            parts.append(f"{Path(found).resolve()}:{info.st_size}:{info.st_mtime_ns}".encode())
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:16]


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second job waits for the first one's build instead of repeating it
        yield


def _build(target: Path, module: str, tool_dirs: list[str], python: Path, runner: Path) -> None:
    log.warning("building %s (once per toolchain: a few minutes)", target.name)
    argv = [str(python), "-m", module, str(target)]
    try:
        with tempfile.TemporaryDirectory(prefix=".seed-home-", dir=target.parent) as home:
            env = {
                "PATH": ":".join([*tool_dirs, "/usr/local/bin", "/usr/bin", "/bin"]),
                "HOME": home,
                "LANG": "C.UTF-8",
                "PYTHONPATH": str(runner),
                "PYTHONDONTWRITEBYTECODE": "1",
            }
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=SEED_TIMEOUT_SEC)
        said = done.stderr.strip().splitlines()[-1:] or [f"{module} exited {done.returncode}"]
    except (OSError, subprocess.SubprocessError) as exc:
        said = [str(exc)]
    if not (target / COMPLETE).is_file():
        log.warning("%s was not built, its jobs go without it: %s", target.name, said[0])
        target.with_suffix(FAILED).write_text(said[0] + "\n")
