"""The relay gives a JVM (Maven) its proxy: Java reads no ``HTTPS_PROXY``, only ``-Dhttps.proxyHost``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mendflow_runner.relay as relay

RELAY = Path(relay.__file__)


def test_the_relay_gives_a_jvm_its_proxy_after_the_options_it_had(tmp_path: Path) -> None:
    show = "import os; print(os.environ['JAVA_TOOL_OPTIONS']); print(os.environ['HTTPS_PROXY'])"
    done = subprocess.run(
        [sys.executable, str(RELAY), str(tmp_path / "no-socket"), str(tmp_path / "refusals"), "--",
         sys.executable, "-c", show],
        env={"JAVA_TOOL_OPTIONS": "-Xmx256m", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    options, proxy = done.stdout.splitlines()
    port = proxy.rsplit(":", 1)[1]
    assert options == (
        f"-Xmx256m -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort={port} "
        f"-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort={port}"
    )
