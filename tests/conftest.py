import os
from pathlib import Path

import pytest

# The suite checks what the loop does with the tests it generates, not how far a longer search gets: every
# module's Pynguin search is 5 s (users' default: 20 s up to 60 s), in this process and every command and server
# the tests start. Pynguin is the loop's longest step: this saves ~40 s per offline loop on the example.
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_SEC", "5")
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_MAX_SEC", "5")

# Real services, each started once per session by its fixture module.
pytest_plugins = [
    f"tests.fixtures.{name}" for name in ("repos", "prefect", "s3", "kube", "kube_node", "weaviate", "llm_server")
]


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the groups into the test ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that share one costly thing run on one xdist worker (``--dist loadgroup``): the real node (one per
    machine: it holds /run/mendflow-node.lock), and each language runner's session cache, filled once."""
    for item in items:
        if "real_node" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("real_node"))
        elif (runner := _runner_tests(item.path)) is not None:
            item.add_marker(pytest.mark.xdist_group(runner))


def _runner_tests(path: Path) -> str | None:
    parts = path.relative_to(Path(__file__).parent).parts
    return f"images/{parts[1]}" if len(parts) > 2 and parts[0] == "images" else None
