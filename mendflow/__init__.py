"""mendflow: a self-healing CI loop on Prefect."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mendflow")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
