"""What the dependency phase's egress proxy costs: a cold-cache ``uv pip install`` run directly and through the
relay and proxy in a fresh network namespace, side by side, alternating (run by hand; prints a table).

    uv run python bench/egress_bench.py [--repeat 3] [--packages "requests rich pydantic"]
"""

from __future__ import annotations

import argparse
import shutil
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.resources import files
from pathlib import Path

from mendflow.launcher.egress import Allowlist, EgressProxy
from mendflow.settings import Settings


def _install(packages: list[str], through: list[str], work: Path) -> float:
    """Seconds for a fresh venv plus a cold-cache install of ``packages``, the install run after ``through``."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "UV_CACHE_DIR": str(work / "cache")}
    if cafile := ssl.get_default_verify_paths().cafile:  # as the launcher does: a TLS-inspecting mirror
        env["SSL_CERT_FILE"] = cafile
    uv = shutil.which("uv") or "uv"
    subprocess.run([uv, "venv", "-q", str(work / "venv")], env=env, check=True)
    start = time.perf_counter()
    argv = [*through, uv, "pip", "install", "-q", "--python", str(work / "venv/bin/python"), *packages]
    subprocess.run(argv, env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--packages", default="requests rich pydantic")
    args = ap.parse_args()
    packages = args.packages.split()
    base = Path(tempfile.mkdtemp(prefix="mendflow-egress-"))
    relay = str(files("mendflow_runner") / "relay.py")
    proxy = EgressProxy(base / "sock", Allowlist(Settings().sandbox.egress_hosts))
    sandbox = ["bwrap", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--bind", str(base), str(base)]
    through = [*sandbox, "--", sys.executable, "-I", relay, str(proxy.path), str(base / "refused"), "--"]
    direct, proxied = [], []
    try:
        for _ in range(args.repeat):
            direct.append(_install(packages, [], base / "work"))
            proxied.append(_install(packages, through, base / "work"))
    finally:
        proxy.close()
        shutil.rmtree(base, ignore_errors=True)
    d, p = statistics.median(direct), statistics.median(proxied)
    print(f"cold install of {' '.join(packages)}, {args.repeat} rounds, median seconds")
    print(f"{'direct':>10} {'proxied':>10} {'ratio':>7}")
    print(f"{d:>10.2f} {p:>10.2f} {p / d:>7.2f}")


if __name__ == "__main__":
    main()
