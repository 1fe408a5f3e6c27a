"""Small Python projects used as build subjects."""

PYPROJECT = """\
[project]
name = "shapes"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

MODULE = """\
def area(width: float, height: float) -> float:
    if width < 0 or height < 0:
        raise ValueError("negative size")
    return width * height
"""

PASSING = {
    "pyproject.toml": PYPROJECT,
    "shapes.py": MODULE,
    "tests/test_shapes.py": "from shapes import area\n\n\ndef test_area() -> None:\n    assert area(2, 3) == 6\n",
}

FAILING = {
    **PASSING,
    "tests/test_shapes.py": "from shapes import area\n\n\ndef test_area() -> None:\n    assert area(2, 3) == 7\n",
}


def with_unused_import(*modules: str) -> dict[str, str]:
    """PASSING with ``import <module>`` lines atop shapes.py: one F401 finding each (the repo chose ruff, so
    they are lint errors, not advice)."""
    imports = "".join(f"import {m}\n" for m in modules)
    return {**PASSING, "pyproject.toml": PYPROJECT + "\n[tool.ruff]\n", "shapes.py": imports + "\n\n" + MODULE}


BROKEN_DEPENDENCY = {
    **PASSING,
    "requirements.txt": "mendflow-no-such-package-anywhere==9.9.9\n",
}

# An index nobody listens on: uv cannot connect, which may pass when tried again (transient). The test that builds
# it puts the index on the egress allowlist (UNREACHABLE_INDEX_HOST); off it, the failure would be deterministic.
UNREACHABLE_INDEX_HOST = "127.0.0.1:9"
UNREACHABLE_INDEX = {
    **PASSING,
    "requirements.txt": f"--index-url https://{UNREACHABLE_INDEX_HOST}/simple/\nmendflow-unreachable==1.0\n",
}

MALFORMED_PYPROJECT = {**PASSING, "pyproject.toml": "[project\nname = \n"}
