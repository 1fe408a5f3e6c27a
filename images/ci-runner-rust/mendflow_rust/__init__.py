"""mendflow's CI runner for Rust (cargo) projects: ``python -m mendflow_rust``."""
