"""Source-based coverage of a Rust test run (``-C instrument-coverage``) as LCOV: ``llvm-profdata merge`` of the
raw profiles, ``llvm-cov export`` over every test binary, symbol names demangled with ``llvm-cxxfilt``.

The LLVM tools must read the profiles of the LLVM inside rustc (``rustc -vV``'s ``LLVM version``): the image
has rustup's ``llvm-tools`` component; a host may have Debian's ``llvm-<major>`` (``llvm-cov-22``). Stable Rust has
no branch coverage (``-Z coverage-options=branch`` is nightly), so the contract says ``branch_data: false``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from mendflow_runner.proc import StepResult

FLAGS = "-C instrument-coverage"
_LLVM_MAJOR = re.compile(r"^LLVM version: (\d+)", re.MULTILINE)
_FN = re.compile(r"^(FN|FNDA):([^,]+),(.+)$")
# What is not the repository's code: the standard library (``/rustc/<hash>/``) and dependencies.
IGNORED = r"^/rustc/|/\.cargo/registry/|/\.cargo/git/|/cargo/registry/|/cargo/git/"


def ignored(root: Path, unmeasured: list[str] | None = None) -> str:
    """``IGNORED`` and, as cargo-llvm-cov leaves them out by default, the crate's own test, example and bench
    targets: any ``tests/``, ``examples/`` or ``benches/`` directory under ``root`` (the code under test is the
    rest; Go's, Java's and Node's runners measure no test code either); and the ``unmeasured`` directories
    (relative to ``root``: a proc-macro crate's sources, which run inside the compiler, not a test binary)."""
    top = re.escape(root.resolve().as_posix())
    dirs = "".join(f"|^{top}/{re.escape(d)}/" for d in unmeasured or [])
    return rf"{IGNORED}|^{top}(/.*)?/(tests|examples|benches)/{dirs}"


class CoverageToolsMissing(LookupError):
    """No llvm-profdata/llvm-cov for rustc's LLVM: the run has no coverage (said as advice)."""


# the file an LLVM tool quotes before its error (``'…/deps/static_assertions-…': no coverage data found``)
_QUOTED_FILE = re.compile(r"'[^']*/[^']*': ")


def tool_error(step: StepResult) -> str:
    """An LLVM tool's first ``error:`` line without the job's file it quotes: ``failed to load coverage: no
    coverage data found`` (a crate whose code is all macros, whose test binaries hold no coverage of it)."""
    errors = [line.removeprefix("error: ") for line in step.stderr.splitlines() if line.startswith("error: ")]
    return _QUOTED_FILE.sub("", errors[0]) if errors else step.last_stderr_line()


def llvm_major(rustc_version: StepResult) -> str:
    match = _LLVM_MAJOR.search(rustc_version.stdout)
    return match[1] if match else ""


def find_tool(name: str, major: str, sysroot: Path | None, path: str | None) -> str:
    """``name`` for LLVM ``major``: rustup's llvm-tools in the sysroot, else ``name-<major>`` on PATH."""
    if sysroot is not None:
        for candidate in sysroot.glob(f"lib/rustlib/*/bin/{name}"):
            return str(candidate)
    found = shutil.which(f"{name}-{major}", path=path) if major else None
    if found is None:
        raise CoverageToolsMissing(f"{name} for LLVM {major or '?'} is not installed: no coverage")
    return found


def find_demangler(major: str, sysroot: Path | None, path: str | None) -> str | None:
    """LLVM's llvm-cxxfilt, else binutils' c++filt (which knows Rust's manglings too; gcc brings it, and rustup's
    llvm-tools has no llvm-cxxfilt), else None: the functions keep their mangled names."""
    try:
        return find_tool("llvm-cxxfilt", major, sysroot, path)
    except CoverageToolsMissing:
        return shutil.which("c++filt", path=path)


def demangle_names(lcov: str, demangled: dict[str, str]) -> str:
    """LCOV with each ``FN``/``FNDA`` symbol replaced by its demangled path, without its crate (``demo::add`` →
    ``add``), and each function once per file (a lib and its test binary both name it)."""
    seen: set[str] = set()
    out = []
    for line in lcov.splitlines():
        if line.startswith("SF:"):
            seen.clear()
        elif match := _FN.match(line):
            name = demangled.get(match[3], match[3]).split("::", 1)[-1]
            line = f"{match[1]}:{match[2]},{name}"
            if line in seen:
                continue
            seen.add(line)
        out.append(line)
    return "\n".join(out) + "\n"


def symbols(lcov: str) -> list[str]:
    return sorted({m[3] for line in lcov.splitlines() if (m := _FN.match(line))})
