"""The index stage: keep the code index fresh for the repositories mendflow serves.

Every run remembers its repository (identity → location) in the artefact store; the scheduled re-index
flow reads that list, so it indexes what mendflow serves, not the checkout it runs from.
"""

from mendflow.index.served import ServedRepo, remember, served_repos

__all__ = ["ServedRepo", "remember", "served_repos"]
