import importlib.util

_PLUGINS = ("repos", "prefect", "s3", "kube", "weaviate", "llm_server")
pytest_plugins = [
    f"tests.fixtures.{name}" for name in _PLUGINS if importlib.util.find_spec(f"tests.fixtures.{name}")
]
