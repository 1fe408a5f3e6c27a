"""mendflow's in-job CI runner for Go modules (the ``ci-runner-go`` image); the shared core is ``mendflow_runner``."""

__version__ = "0.1.0"
