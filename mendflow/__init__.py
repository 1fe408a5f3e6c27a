"""mendflow: a self-healing CI loop on Prefect."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``__version__`` on first use: importlib.metadata costs ~25 ms that `mendflow search` and `grep` skip."""
    if name != "__version__":
        raise AttributeError(f"module 'mendflow' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mendflow")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found
