import os

# The suite checks what the loop does with the tests it generates, not how far a longer search gets: every
# module's Pynguin search is 5 s (users' default: 20 s up to 60 s), in this process and every command and server
# the tests start. Pynguin is the loop's longest step: this saves ~40 s per offline loop on the example.
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_SEC", "5")
os.environ.setdefault("MENDFLOW_PYNGUIN__SEARCH_TIME_MAX_SEC", "5")

# Real services, each started once per session by its fixture module.
pytest_plugins = [
    f"tests.fixtures.{name}" for name in ("repos", "prefect", "s3", "kube", "kube_node", "weaviate", "llm_server")
]
