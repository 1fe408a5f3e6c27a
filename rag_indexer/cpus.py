"""How many CPUs this process may use: its affinity mask, capped by the CPU quota of its cgroups.

``os.cpu_count()`` reports the host's CPUs, so a pod limited to one CPU on a 32-core node would start 4
index processes that then share one CPU's time. Read by hand (cgroup v2 ``cpu.max``, v1
``cpu.cfs_quota_us``): the few kernel files are stable, and the libraries that do this (loky) would be a
dependency for twenty lines.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def usable_cpus(cgroup_root: Path = CGROUP_ROOT) -> int:
    cpus = len(os.sched_getaffinity(0))
    quota = min((q for q in _quotas(cgroup_root) if q > 0), default=None)
    return max(1, min(cpus, math.floor(quota))) if quota is not None else cpus


def _quotas(root: Path) -> list[float]:
    """CPU quotas (in CPUs) of our cgroup and its ancestors; the smallest one binds."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    quotas: list[float] = []
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        if controllers == "" and (root / "cgroup.controllers").exists():  # v2, the unified hierarchy
            quotas += [_v2_quota(d / "cpu.max") for d in _ancestors(root, rel)]
        elif "cpu" in controllers.split(","):
            mount = root / controllers
            if not mount.exists():
                mount = root / "cpu"
            quotas += [_v1_quota(d) for d in _ancestors(mount, rel)]
    return quotas


def _ancestors(mount: Path, rel: str) -> list[Path]:
    """The group's directory and its parents up to the mount (a namespaced group is the mount itself)."""
    group = mount / rel.strip("/")
    dirs = [group, *group.parents]
    return [d for d in dirs if d == mount or mount in d.parents]


# An unreadable or absent file means no quota at that level (-1), as the kernel's own "max" and -1 do.
def _v2_quota(path: Path) -> float:
    try:
        quota, period = path.read_text().split()
    except (OSError, ValueError):
        return -1
    return -1 if quota == "max" else int(quota) / int(period)


def _v1_quota(group: Path) -> float:
    try:
        quota = int((group / "cpu.cfs_quota_us").read_text())
        period = int((group / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return -1
    return quota / period if quota > 0 else -1
