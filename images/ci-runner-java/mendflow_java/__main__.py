"""``python -m mendflow_java``: the Java (Maven) runner, with the Python runner's entry protocol
(``mendflow_runner``).

Same flags, environment, outputs and exit codes; ``coverage.json`` is the ``Coverage`` contract read from
JaCoCo's XML report of the test run (kept in ``--out`` as ``jacoco.xml``, every module's in one). Fix mode is
Python's only.

Steps (``mendflow_java.build``): unpack → dependencies (``go-offline`` and a test run that runs no test, with
the Maven repository the phase's only way out) → build and tests (one offline ``mvn test`` with JaCoCo's agent;
``--select`` takes ``src/test/java/…/FooTest.java::method`` ids) → coverage (``jacoco:report``).
"""

from __future__ import annotations

import sys

from mendflow_runner.__main__ import main

from .build import JavaBuild

if __name__ == "__main__":
    sys.exit(main(builder=JavaBuild))
