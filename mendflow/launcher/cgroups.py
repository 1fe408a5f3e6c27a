"""Per-job cgroup v1 groups for the local launcher: memory, a CPU quota and a cap on processes.

Each group is a child of our own group in that controller's hierarchy. A controller that is absent or not
writable (an unprivileged user, a cgroup v2-only host) is skipped, and the job's rlimits stay its only bound.
Written by hand rather than with a library: the few files involved are the kernel's interface, and the
maintained Python cgroup packages target v2 or systemd only.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000
CONTROLLERS = ("memory", "cpu", "pids")


@dataclass(frozen=True)
class JobLimits:
    memory_mb: int
    cpus: float
    max_processes: int


class Group:
    """One job's group under one controller."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, controller: str, name: str, values: dict[str, str], optional: frozenset[str]) -> Group | None:
        parent = own_group(controller)
        if parent is None:
            return None
        path = parent / name
        try:
            path.mkdir()
            for key, value in values.items():
                try:
                    (path / key).write_text(value)
                except OSError:
                    if key not in optional:
                        raise
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path)

    def read(self, name: str) -> str:
        try:
            return (self.path / name).read_text()
        except OSError:
            return ""

    def counters(self, name: str) -> dict[str, int]:
        """A flat-keyed file of ``key value`` counters (``pids.events``, ``memory.oom_control``); empty if unread."""
        pairs = (line.split() for line in self.read(name).splitlines())
        return {pair[0]: int(pair[1]) for pair in pairs if len(pair) == 2 and pair[1].isdigit()}

    def remove(self) -> None:
        for _ in range(50):  # rmdir fails with EBUSY until the last (killed) task has gone
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def own_group(controller: str) -> Path | None:
    """Our own group in ``controller``'s v1 hierarchy, if we may create children in it."""
    mount = CGROUP_ROOT / controller
    if not (mount / "cgroup.procs").exists():
        return None
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, rel = line.split(":", 2)
        if controller in controllers.split(","):
            path = mount / rel.lstrip("/")
            return path if os.access(path, os.W_OK) else None
    return None


class JobCgroups:
    """The job's groups, one per controller that could be set up; empty where none could."""

    def __init__(self, groups: dict[str, Group]) -> None:
        self.groups = groups

    @classmethod
    def create(cls, job_id: str, limits: JobLimits) -> JobCgroups:
        memory = str(limits.memory_mb * 1024 * 1024)
        wanted = {
            # memsw is absent without swap accounting; without it swap is not counted, which is acceptable.
            "memory": (
                {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory},
                {"memory.memsw.limit_in_bytes"},
            ),
            "cpu": (
                {"cpu.cfs_period_us": str(CPU_PERIOD_US), "cpu.cfs_quota_us": str(int(limits.cpus * CPU_PERIOD_US))},
                set(),
            ),
            "pids": ({"pids.max": str(limits.max_processes)}, set()),
        }
        groups = {}
        for controller, (values, optional) in wanted.items():
            group = Group.create(controller, f"mendflow-{job_id}", values, frozenset(optional))
            if group is not None:
                groups[controller] = group
        return cls(groups)

    @classmethod
    def existing(cls, job_id: str) -> JobCgroups:
        """The groups a job left behind (its run was killed before its own clean-up)."""
        groups = {}
        for controller in CONTROLLERS:
            parent = own_group(controller)
            if parent is not None and (parent / f"mendflow-{job_id}").is_dir():
                groups[controller] = Group(parent / f"mendflow-{job_id}")
        return cls(groups)

    @property
    def procs_files(self) -> list[str]:
        return [str(g.path / "cgroup.procs") for g in self.groups.values()]

    def pids(self) -> list[int]:
        found: set[int] = set()
        for group in self.groups.values():
            found.update(int(p) for p in group.read("cgroup.procs").split())
        return sorted(found)

    def oom_killed(self) -> bool:
        memory = self.groups.get("memory")
        return memory is not None and memory.counters("memory.oom_control").get("oom_kill", 0) > 0

    def reached_process_cap(self) -> bool:
        """Whether a fork or thread was refused at ``pids.max`` (``pids.events``: "max N")."""
        group = self.groups.get("pids")
        return group is not None and group.counters("pids.events").get("max", 0) > 0

    def remove(self) -> None:
        for group in self.groups.values():
            group.remove()
