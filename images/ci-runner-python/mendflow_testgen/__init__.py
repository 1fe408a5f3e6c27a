"""mendflow's in-job test builder (stdlib only): generate (Pynguin) and gate candidate tests in the sandbox.

It runs on the ``ci-runner-python`` image and reuses its ``mendflow_runner`` package (unpack, dependency
install, step runner, pytest plugin). See ``mendflow_testgen.__main__`` for the command line.
"""

__version__ = "0.1.0"
