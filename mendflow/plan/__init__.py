"""Test Planner: which functions need tests, and which cases (seed 000 §3)."""

from mendflow.plan.planner import plan_tests, spec_id

__all__ = ["plan_tests", "spec_id"]
