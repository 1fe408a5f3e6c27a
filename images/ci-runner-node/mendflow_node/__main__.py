"""``python -m mendflow_node``: the Node (JavaScript and TypeScript) runner, with the Python runner's entry
protocol (``mendflow_runner``).

Same flags, environment, outputs and exit codes; ``coverage.json`` is the ``Coverage`` contract read from the
test runner's LCOV (``mendflow_runner.coverage_formats``), which stays in ``--out`` as ``lcov.info``. Fix mode is
Python's only.

Steps (``mendflow_node.build``): unpack → dependencies (the lockfile's frozen install: ``npm ci``,
``pnpm install --frozen-lockfile``, ``yarn install --immutable``; the npm registry the phase's only way out) →
build (``tsc --noEmit`` with a tsconfig) → lint (eslint when configured) → tests (the runner the ``test`` script
names: jest, vitest, mocha, ``node --test``, with coverage; ``--select`` takes ``FILE::NAME`` ids; any other
script runs as it is) → coverage.
"""

from __future__ import annotations

import sys

from mendflow_runner.__main__ import main

from .build import NodeBuild

if __name__ == "__main__":
    sys.exit(main(builder=NodeBuild))
