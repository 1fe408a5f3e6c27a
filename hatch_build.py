"""The wheel's `mendflow` command: the native launcher (native/) where cargo can build it, else a Python script.

The launcher answers `mendflow grep` from a grep pack in about rg's time, which CPython's start alone exceeds on
a small tree, and hands every other command to the `mendflow-py` console script beside it. A wheel with it is
a platform wheel; without cargo (the flow image, a machine with no Rust), or with MENDFLOW_NATIVE=0, the
wheel stays pure and `mendflow` is a script that starts Python, as `mendflow-py` does. Either way both
commands are installed and answer alike: the launcher only ever answers what Python would, the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PYTHON_ENTRY = "#!/usr/bin/env python3\nfrom mendflow.cli import main\n\nmain()\n"


class NativeLauncherHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        self._scratch = Path(tempfile.mkdtemp(prefix="mendflow-entry-"))
        launcher = self._native_launcher()
        if launcher is None:
            entry = self._scratch / "mendflow"
            entry.write_text(PYTHON_ENTRY)
            entry.chmod(0o755)
            build_data["shared_scripts"][str(entry)] = "mendflow"
            return
        build_data["shared_scripts"][str(launcher)] = "mendflow"
        build_data["pure_python"] = False
        # Any Python 3 (the launcher calls none of Python's ABI), this platform only.
        build_data["tag"] = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)

    def _native_launcher(self) -> Path | None:
        """The launcher built with cargo (its target directory: MENDFLOW_NATIVE_TARGET, kept between builds by
        scripts/lib/bootstrap.sh), or None."""
        manifest = Path(self.root) / "native" / "Cargo.toml"
        cargo = shutil.which("cargo")
        if os.environ.get("MENDFLOW_NATIVE") == "0" or cargo is None or not manifest.is_file():
            return None
        target = Path(os.environ.get("MENDFLOW_NATIVE_TARGET") or manifest.parent / "target")
        command = [cargo, "build", "--release", "--locked", "--quiet", "--manifest-path", str(manifest)]
        built = subprocess.run([*command, "--target-dir", str(target)], check=False)
        if built.returncode != 0:
            print("mendflow: cargo could not build the native launcher; `mendflow` starts Python", file=sys.stderr)
            return None
        # Copied out of the target directory: a later cargo build there must not change an installed wheel's file.
        launcher = self._scratch / "launcher" / "mendflow"
        launcher.parent.mkdir()
        shutil.copy2(target / "release" / "mendflow", launcher)
        return launcher
