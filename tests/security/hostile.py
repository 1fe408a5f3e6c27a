"""The pieces of a hostile repository: a lint-clean conftest that starts a watcher, and the watcher.

The conftest passes B1's lint (so the run goes on) and starts ``watch.txt`` — a plain file ruff does not
read — in a new session. The watcher finds the job's ``--out`` directory in the process table (its own uid's
processes), and keeps applying ``tamper(path)`` to one output file there until the job is gone.
``outside_watcher`` starts the same watcher from the test instead: a job already taken over (install-time
code, a sandbox escape), for what the trusted side must refuse even when the sandbox did not stop it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFTEST = """\
import os
import subprocess
import sys
from pathlib import Path

if "WATCHER_STARTED" not in os.environ:
    os.environ["WATCHER_STARTED"] = "1"
    watcher = Path(__file__).with_name("watch.txt")
    subprocess.Popen([sys.executable, str(watcher)], start_new_session=True)
"""

_WATCHER = r"""
import json, os, time
HERE = os.path.dirname(os.path.abspath(__file__))
{tamper}
def out_dirs():
    for pid in os.listdir("/proc"):
        try:
            argv = open(f"/proc/{{pid}}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if any({job!r} in a for a in argv) and b"--out" in argv:
            yield argv[argv.index(b"--out") + 1].decode()
deadline = time.time() + 600
while time.time() < deadline:
    for out in list(out_dirs()):
        try:
            tamper(os.path.join(out, {output!r}))
        except (OSError, ValueError, KeyError):
            continue
    time.sleep(0.001)
"""


def repo_files(job: str, output: str, tamper: str) -> dict[str, str]:
    """The conftest and watcher that apply ``tamper`` (source of ``def tamper(path)``) to ``output``."""
    watcher = _WATCHER.format(tamper=tamper, job=job.encode(), output=output)
    return {"tests/conftest.py": CONFTEST, "tests/watch.txt": watcher}


def outside_watcher(job: str, output: str, tamper: str, here: Path) -> subprocess.Popen[bytes]:
    """The watcher of ``repo_files`` run from ``here`` (its data files beside it), outside any sandbox."""
    script = here / "watch.py"
    script.write_text(_WATCHER.format(tamper=tamper, job=job.encode(), output=output))
    return subprocess.Popen([sys.executable, str(script)], start_new_session=True)
