"""The functions' names without llvm-cxxfilt (rustup's llvm-tools has none): binutils' c++filt, as gcc brings it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from mendflow_rust import coverage

# What rustc writes: the legacy mangling (with its hash) and the v0 one (with its crate disambiguator).
SYMBOLS = ["_ZN4demo3add17h0123456789abcdefE", "_RNvNtCs1234_4demo5units5round"]
LCOV = "SF:/src/lib.rs\n" + "".join(f"FN:{n},{s}\nFNDA:1,{s}\n" for n, s in enumerate(SYMBOLS, 1)) + "end_of_record\n"


def _names(demangler: str) -> str:
    out = subprocess.run([demangler, *SYMBOLS], capture_output=True, text=True, check=True).stdout.splitlines()
    return coverage.demangle_names(LCOV, dict(zip(SYMBOLS, out, strict=True)))


@pytest.mark.skipif(shutil.which("c++filt") is None, reason="needs binutils' c++filt")
def test_without_llvm_cxxfilt_binutils_cxxfilt_is_the_demangler(tmp_path: Path) -> None:
    cxxfilt = shutil.which("c++filt")
    assert cxxfilt is not None
    (tmp_path / "c++filt").symlink_to(cxxfilt)
    assert coverage.find_demangler("99", None, str(tmp_path)) == str(tmp_path / "c++filt")


@pytest.mark.skipif(
    shutil.which("c++filt") is None or shutil.which("llvm-cxxfilt-22") is None,
    reason="needs binutils' c++filt and LLVM 22's llvm-cxxfilt",
)
def test_both_demanglers_give_the_same_function_names() -> None:
    assert _names("c++filt") == _names("llvm-cxxfilt-22")
    assert "FN:2,units::round\n" in _names("c++filt")
