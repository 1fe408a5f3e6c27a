"""Fixtures of the code-index tests: one parametrized index (embedded always, Weaviate when the
``weaviate_server`` fixture is available) so both stores pass the same suite."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rag_indexer.api import CodeIndex, open_index
from rag_indexer.config import IndexerConfig
from tests.rag_indexer.openai_stub import embeddings_stub  # noqa: F401  (fixture)

IndexFactory = Callable[..., CodeIndex]

SAMPLE_FILES: dict[str, str | bytes] = {
    "calc/core.py": (
        '"""Arithmetic helpers."""\n\n\n'
        "class Calculator:\n"
        '    """Keeps a running total."""\n\n'
        "    def divide(self, a: float, b: float) -> float:\n"
        '        """Divide a by b, refusing zero."""\n'
        "        if b == 0:\n"
        '            raise ZeroDivisionError("b is zero")\n'
        "        return a / b\n\n\n"
        "def parse_amount(text: str) -> float:\n"
        '    """Parse a monetary amount like 12.50."""\n'
        "    return float(text.strip())\n"
    ),
    "web/render.ts": (
        "/** Render a page title. */\n"
        "export function renderTitle(title: string): string {\n"
        "  return `<h1>${title}</h1>`;\n"
        "}\n\n"
        "export class PageWidget {\n"
        "  draw(): void {}\n"
        "}\n"
    ),
    "server/handler.go": (
        "package server\n\n"
        "// Handler serves HTTP requests for invoices.\n"
        "type Handler struct{}\n\n"
        "// ServeInvoice writes one invoice.\n"
        "func (h *Handler) ServeInvoice(id string) error {\n"
        "\treturn nil\n"
        "}\n"
    ),
    "README.md": "# Demo\n\nA calculator and an invoice server.\n",
}


@pytest.fixture(params=["embedded", "weaviate"])
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Settings overrides selecting one store; Weaviate collections get a per-test prefix."""
    if request.param == "embedded":
        return {"backend": "embedded"}
    try:
        server = request.getfixturevalue("weaviate_server")
    except pytest.FixtureLookupError:
        pytest.skip("no weaviate_server fixture (tests/fixtures/weaviate.py) in this checkout")
    return {
        "backend": "weaviate",
        "weaviate_url": server.url,
        "weaviate_grpc_port": server.grpc_port,
        "collection_prefix": f"T{uuid.uuid4().hex[:10]}",
        "store_retry_delay_sec": 0.5,
        "_server": server,
    }


@pytest.fixture
def make_index(backend: dict[str, Any], tmp_path: Path) -> Iterator[IndexFactory]:
    """``make_index(**config_overrides)`` → an open CodeIndex on the parametrized store (closed after)."""
    opened: list[CodeIndex] = []
    settings = {k: v for k, v in backend.items() if not k.startswith("_")}

    def factory(**overrides: Any) -> CodeIndex:
        config = IndexerConfig.model_validate({"index_dir": tmp_path / "index", **settings, **overrides})
        index = open_index(config=config)
        opened.append(index)
        return index

    yield factory
    for index in opened:
        index.close()
    if backend["backend"] == "weaviate":
        from rag_indexer.store.weaviate import WeaviateStore

        config = IndexerConfig.model_validate({"index_dir": tmp_path / "index", **settings})
        store = WeaviateStore(config)
        store.drop()
        store.close()


@pytest.fixture
def code_index(make_index: IndexFactory) -> CodeIndex:
    return make_index()


@pytest.fixture
def sample_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(dict(SAMPLE_FILES), name="sample")
