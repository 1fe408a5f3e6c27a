"""The commit's version for build backends that read it from git: a job's sources come without ``.git``, so
setuptools-scm (and hatch-vcs and flit_scm, which use it), pdm-backend's scm source, poetry-dynamic-versioning and
uv-dynamic-versioning would refuse to build the project. The trusted side says the version its tags give the
commit (``mendflow.gitversion``), and each backend gets it as its own override, as a CI without history would set
it. Not where the tree is an sdist (a ``PKG-INFO`` at its root): those backends read the released version from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

JOB_VERSION = "MENDFLOW_JOB_SCM_VERSION"
OVERRIDES = (
    "SETUPTOOLS_SCM_PRETEND_VERSION",
    "PDM_BUILD_SCM_VERSION",
    "POETRY_DYNAMIC_VERSIONING_BYPASS",
    "UV_DYNAMIC_VERSIONING_BYPASS",
)


def overrides(src: Path, env: Mapping[str, str]) -> dict[str, str]:
    """Each backend's override of the version, set to the job's, where the job has one and ``src`` is no sdist;
    one the environment sets already is left as it is."""
    version = env.get(JOB_VERSION, "")
    if not version or (src / "PKG-INFO").is_file():
        return {}
    return {name: version for name in OVERRIDES if name not in env}
