"""The code that runs inside a job, found through ``importlib.resources``.

Each image's in-job packages (``images/<image>/<package>/``) are installed beside mendflow as top-level
packages (``pyproject.toml``'s wheel targets), so an editable checkout and an installed wheel find them the
same way: by import name, never by walking up from this file.
"""

from __future__ import annotations

import io
import zipfile
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from mendflow.contracts import Language
from mendflow.errors import ConfigError

RUNNER_PACKAGE = "mendflow_runner"  # the runner's shared core, in every image, and Python's build
TESTGEN_PACKAGE = "mendflow_testgen"
# Python's image serves every Python job: the runner's build and fix modes, and the test builder's gates.
RUNNER_IMAGE = "ci-runner-python"
# Each language's CI image, and the in-job packages it holds (its entry package last).
RUNNER_IMAGES: dict[Language, str] = {
    Language.PYTHON: RUNNER_IMAGE,
    Language.GO: "ci-runner-go",
    Language.TYPESCRIPT: "ci-runner-node",
    Language.RUST: "ci-runner-rust",
    Language.JAVA: "ci-runner-java",
}
IMAGE_PACKAGES: dict[str, tuple[str, ...]] = {
    RUNNER_IMAGE: (RUNNER_PACKAGE,),
    "ci-runner-go": (RUNNER_PACKAGE, "mendflow_go"),
    "ci-runner-node": (RUNNER_PACKAGE, "mendflow_node"),
    "ci-runner-rust": (RUNNER_PACKAGE, "mendflow_rust"),
    "ci-runner-java": (RUNNER_PACKAGE, "mendflow_java"),
}
# The toolchain each image brings beside Python; the local launcher takes the host's.
IMAGE_TOOLS: dict[str, tuple[str, ...]] = {
    "ci-runner-go": ("go", "gofmt"),
    "ci-runner-node": ("node", "npm"),
    "ci-runner-java": ("java", "mvn"),
}
# A toolchain kept whole under one root, which the local launcher finds by asking it (rustup's sysroot: its
# cargo, rustc, clippy and rustfmt, without rustup's proxies, which would read a rust-toolchain.toml).
IMAGE_SYSROOTS: dict[str, tuple[str, ...]] = {"ci-runner-rust": ("rustc", "--print", "sysroot")}
# A cache an image builds ahead of its jobs (``mendflow.launcher.seeds``): the module that builds it
# (``python -m MODULE TARGET``) and the variable that tells its jobs where it is (the module's own).
IMAGE_SEEDS: dict[str, tuple[str, str]] = {"ci-runner-go": ("mendflow_go.warm", "MENDFLOW_GO_STD_CACHE")}
# The runner's entry, in build and fix mode alike: the snapshot in, the outputs' directory out.
_SNAPSHOT, _OUT = "{workspace}/in/source.tar.gz", "{workspace}/out"
RUNNER_COMMAND = ("python", "-m", RUNNER_PACKAGE, "--source", _SNAPSHOT, "--out", _OUT)


def runner_command(image: str) -> list[str]:
    """The build entry of ``image``: its entry package with the runner's protocol."""
    return ["python", "-m", IMAGE_PACKAGES[image][-1], *RUNNER_COMMAND[3:]]


# Fixed timestamps: the same sources give the same zip bytes, so an upload keyed by digest is reused.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def package_files(package: str) -> dict[str, bytes]:
    """Every file of the in-job ``package``: posix path relative to the package → bytes, in sorted order."""
    try:
        root = files(package)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"the in-job package {package!r} is not installed", hint="reinstall mendflow (uv sync, or uv pip install .)"
        ) from exc
    found: dict[str, bytes] = {}
    _walk(root, "", found)
    return found


def _walk(node: Traversable, prefix: str, found: dict[str, bytes]) -> None:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__" or child.name.endswith(".pyc"):
            continue
        if child.is_dir():
            _walk(child, f"{prefix}{child.name}/", found)
        else:
            found[f"{prefix}{child.name}"] = child.read_bytes()


def copy_package(package: str, target: Path) -> None:
    """Write the in-job ``package`` under ``target/<package>`` (directories 0755, files 0644)."""
    for relative, data in package_files(package).items():
        path = target / package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o644)
    for directory in [target, *(p for p in target.rglob("*") if p.is_dir())]:
        directory.chmod(0o755)


def zipapp_bytes(package: str, entry: str) -> bytes:
    """A zipapp of the stdlib-only ``package`` that runs ``entry`` (``module:function``) as ``__main__``."""
    module, function = entry.split(":")
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        for relative, data in package_files(package).items():
            zf.writestr(_info(f"{package}/{relative}"), data)
        zf.writestr(_info("__main__.py"), f"import sys\nfrom {module} import {function}\nsys.exit({function}())\n")
    return raw.getvalue()


def _info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, _ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info
