"""Usable CPUs: the affinity mask, capped by a real cgroup's CPU quota."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from mendflow.launcher.cgroups import CPU_PERIOD_US, Group
from rag_indexer.cpus import usable_cpus

PRINT_CPUS = "from rag_indexer.cpus import usable_cpus; print(usable_cpus())"


def test_without_a_quota_every_cpu_of_the_affinity_mask_counts() -> None:
    assert usable_cpus() == len(os.sched_getaffinity(0))


def test_a_cgroup_cpu_quota_caps_the_count() -> None:
    quota = {"cpu.cfs_period_us": str(CPU_PERIOD_US), "cpu.cfs_quota_us": str(CPU_PERIOD_US)}  # one CPU
    group = Group.create("cpu", f"mendflow-test-{uuid.uuid4().hex[:8]}", quota, frozenset())
    if group is None:
        pytest.skip("no writable cgroup v1 cpu controller here")
    try:
        # The shell joins the group, then becomes Python: the quota applies from its first instruction.
        join = f'echo $$ > {group.path / "cgroup.procs"} && exec "$0" -c "$1"'
        out = subprocess.run(["sh", "-c", join, sys.executable, PRINT_CPUS], capture_output=True, text=True, check=True)
    finally:
        group.remove()
    assert out.stdout.strip() == "1"
