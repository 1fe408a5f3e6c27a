"""mendflow's in-job CI runner (stdlib only): unpack a snapshot, install, lint, test, report.

See ``mendflow_runner.__main__`` for the command-line and environment contract.
"""

__version__ = "0.1.0"
