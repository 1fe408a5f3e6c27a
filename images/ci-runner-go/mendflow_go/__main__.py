"""``python -m mendflow_go``: the Go runner, with the Python runner's entry protocol (``mendflow_runner``).

Same flags, environment, outputs and exit codes; ``coverage.json`` is the ``Coverage`` contract read from the
toolchain's coverprofile (``mendflow_runner.coverage_formats``), which stays in ``--out`` as ``cover.out``;
there is no ``junit.xml`` (``go test -json``'s events are read instead). Fix mode is Python's only.

Steps (``mendflow_go.build``): unpack → dependencies (``go mod download`` into the module cache, the module
proxy being the phase's only way out; then everything the later steps compile, compiled and run by none) →
build (``go build ./...``) → lint (``go vet``, ``gofmt -l``) → tests (``go test -short -json -covermode=atomic
-coverpkg=./... -coverprofile``; ``--select`` takes ``DIR::TestName`` ids) → coverage.
"""

from __future__ import annotations

import sys

from mendflow_runner.__main__ import main

from .build import GoBuild

if __name__ == "__main__":
    sys.exit(main(builder=GoBuild))
