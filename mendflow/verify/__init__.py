"""The Verifier (seed 000 §5, seed 002 ⑦): a failed build becomes a Regression ticket with its evidence."""

from mendflow.verify.regression import regression_from

__all__ = ["regression_from"]
