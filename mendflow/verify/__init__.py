"""The Verifier (seed 000 §5, seed 002 ⑦): a failed build becomes a Regression ticket with its evidence, and
so does a passing B2 that measured less than B1."""

from mendflow.verify.coverage import coverage_regression
from mendflow.verify.regression import regression_from

__all__ = ["coverage_regression", "regression_from"]
