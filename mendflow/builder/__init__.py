"""Test Builder: generate tests for a TestSpec, gate them in the sandbox, commit the keepers (seed 000 §4)."""

from mendflow.builder.builder import build_tests

__all__ = ["build_tests"]
