"""A job split in two at its dependency phase: one pod installs, the next runs offline with what it installed.

On Kubernetes the network is a pod's, not a process's, so "only the dependency phase reaches the package index"
needs two pods (``mendflow.launcher.kubernetes``): the first may reach the index proxy, the second nothing.
The launcher sets, per pod:

* ``MENDFLOW_PHASE``: ``dependencies`` (unpack, install, pack the environments, stop) or ``offline`` (unpack,
  restore the environments instead of installing, go on). Unset: the whole job in one process, as locally.
* ``MENDFLOW_HANDOFF``: where the archive is written (``dependencies``) or read (``offline``).

The archive holds the environments and the source tree as the install left them (a build backend may write into
it: hatch-vcs's ``_version.py``, an editable install's hooks), as directories relative to the job's workspace,
whose path is the same in both pods, so the venvs' absolute paths (scripts' shebangs, ``pyvenv.cfg``) hold. It
passes from job to job of the same repository and run through the store; the trusted side never opens it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
from pathlib import Path
from typing import Any

PHASE_ENV, ARCHIVE_ENV = "MENDFLOW_PHASE", "MENDFLOW_HANDOFF"
WHOLE, DEPENDENCIES, OFFLINE = "", "dependencies", "offline"
META = "handoff.json"  # in the archive: what the first pod measured (its time spent, its steps' durations)
_COMPRESS_LEVEL = 1  # venvs are mostly shared objects: level 1 gets most of gzip's gain at a fraction of its time


class HandoffError(Exception):
    """The archive is missing or unusable: the offline pod cannot go on without it."""


def phase() -> str:
    value = os.environ.get(PHASE_ENV, WHOLE)
    if value not in (WHOLE, DEPENDENCIES, OFFLINE):
        raise HandoffError(f"{PHASE_ENV}={value!r} is not one of {DEPENDENCIES!r} or {OFFLINE!r}")
    return value


def archive_path() -> Path:
    value = os.environ.get(ARCHIVE_ENV, "")
    if not value:
        raise HandoffError(f"{PHASE_ENV} is set but {ARCHIVE_ENV} is not")
    return Path(value)


def measures(job_started: float, install_started: float) -> dict[str, float]:
    """What the first pod hands the second besides its environments: the job's time spent so far, and the
    install's own (both from ``time.monotonic()`` starts)."""
    now = time.monotonic()
    return {"spent_sec": now - job_started, "installed_sec": now - install_started}


def spent(meta: dict[str, Any], budget: float) -> float:
    """The seconds of the job's budget the first pod spent (at most all of it): the second pod's clock starts that
    much earlier, so both together keep to the job's deadline."""
    return min(float(meta.get("spent_sec", 0.0)), budget)


def pack(root: Path, dirs: list[Path], meta: dict[str, Any]) -> Path:
    """Write the archive of ``dirs`` (under ``root``) with ``meta``; returns where it went."""
    dest = archive_path()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with tarfile.open(tmp, "w:gz", compresslevel=_COMPRESS_LEVEL) as tar:
        for directory in dirs:
            if directory.exists():
                tar.add(directory, arcname=str(directory.relative_to(root)))
        data = json.dumps({**meta, "packed_at": time.time()}).encode()
        info = tarfile.TarInfo(META)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, dest)  # a half-written archive never has the name the upload looks for
    return dest


def restore(root: Path, dirs: list[Path]) -> dict[str, Any]:
    """Replace ``dirs`` (under ``root``) with the archive's (nothing else: no other path, no device); returns its
    meta."""
    source = archive_path()
    if not source.is_file():
        raise HandoffError(f"the dependency phase's archive is missing ({source})")
    wanted = [str(d.relative_to(root)) for d in dirs]
    for directory in dirs:  # as the first pod left them: an install may have written into the source tree
        shutil.rmtree(directory, ignore_errors=True)
    meta: dict[str, Any] = {}
    try:
        with tarfile.open(source, "r:gz") as tar:
            for member in tar:
                if member.name == META and member.isfile():
                    meta = dict(json.load(tar.extractfile(member) or io.BytesIO(b"{}")))
                elif _under(member.name, wanted) and (member.isfile() or member.isdir() or member.issym()):
                    _extract(tar, member, root)
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise HandoffError(f"cannot restore the dependency phase's archive: {exc}") from exc
    return meta


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, root: Path) -> None:
    """Tar's own 'tar' filter: inside root (through links already extracted too), no setuid, no group or other
    write; links may point outside, as a venv's bin/python links to the image's interpreter."""
    if hasattr(tarfile, "tar_filter"):
        tar.extract(member, root, filter="tar")
        return
    # Python < 3.11.4 (Debian 12's 3.11.2, the offline-built image's): the same checks by hand.
    base = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, member.name))
    if os.path.commonpath([base, target]) != base:
        raise ValueError(f"archive member {member.name!r} would land outside {root}")
    member.mode &= 0o7777 & ~(0o6000 | 0o022)
    tar.extract(member, root)


def _under(name: str, tops: list[str]) -> bool:
    return any(name == top or name.startswith(f"{top}/") for top in tops)
