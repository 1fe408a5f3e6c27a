"""Test Builder: generate tests for a TestSpec, gate them in the sandbox, commit the keepers (seed 000 §4)."""

from mendflow.testgen.builder import OnProgress, build_tests

__all__ = ["OnProgress", "build_tests"]
