"""mendflow's CI runner for JavaScript and TypeScript (Node) projects: ``python -m mendflow_node``."""
