"""What the dependency phase's egress proxy costs: ``uv pip install`` into a fresh venv, run directly and through
the relay and proxy in a fresh network namespace, side by side, alternating, with a cold uv cache and a warm one
(the cache a repository's earlier jobs left; uv still revalidates the index pages). Run by hand; prints a table.

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


def _install(packages: list[str], through: list[str], work: Path, cache: Path) -> float:
    """Seconds to install ``packages`` into a fresh venv with the uv cache ``cache``, run after ``through``."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "UV_CACHE_DIR": str(cache)}
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
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(args.repeat):
            for way, prefix in (("direct", []), ("proxied", through)):
                cache = base / f"cache-{way}"
                shutil.rmtree(cache, ignore_errors=True)
                for state in ("cold", "warm"):  # the second install finds what the first left in the cache
                    times.setdefault((way, state), []).append(_install(packages, prefix, base / "work", cache))
    finally:
        proxy.close()
        shutil.rmtree(base, ignore_errors=True)
    print(f"install of {' '.join(packages)} into a fresh venv, {args.repeat} rounds, median seconds")
    print(f"{'cache':>6} {'direct':>8} {'proxied':>8} {'ratio':>6}")
    for state in ("cold", "warm"):
        d, p = (statistics.median(times[(way, state)]) for way in ("direct", "proxied"))
        print(f"{state:>6} {d:>8.2f} {p:>8.2f} {p / d:>6.2f}")


if __name__ == "__main__":
    main()
