"""``python -m mendflow_rust``: the Rust runner, with the Python runner's entry protocol (``mendflow_runner``).

Same flags, environment, outputs and exit codes; ``coverage.json`` is the ``Coverage`` contract read from the
LCOV that ``llvm-cov export`` makes of the test run's profiles (kept in ``--out`` as ``lcov.info``). Fix mode is
Python's only.

Steps (``mendflow_rust.build``): unpack → dependencies (``cargo fetch``, ``--locked`` with a Cargo.lock; the
registry the phase's only way out) → build (``cargo test --no-run``) → lint (``cargo clippy --all-targets``,
``cargo fmt --check``) → tests (``cargo test --no-fail-fast``; ``--select`` takes ``SOURCE::test`` ids) →
coverage (``-C instrument-coverage``, ``llvm-profdata``, ``llvm-cov``).
"""

from __future__ import annotations

import sys

from mendflow_runner.__main__ import main

from .build import RustBuild

if __name__ == "__main__":
    sys.exit(main(builder=RustBuild))
