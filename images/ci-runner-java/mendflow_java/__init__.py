"""mendflow's CI runner for Java (Maven) projects: ``python -m mendflow_java`` (its build is not written yet)."""
