"""Proves the real Weaviate test server (tests/fixtures/weaviate.py) works
end to end with weaviate-client v4: schema, batch insert with explicit
vectors, bm25 / hybrid / filtered queries, and stop()/start() persistence."""

from __future__ import annotations

import pytest

# Idempotent: a no-op if the root conftest already registers the plugin.
pytest_plugins = ["tests.fixtures.weaviate"]

pytestmark = pytest.mark.slow

weaviate = pytest.importorskip("weaviate")

from weaviate.classes.config import Configure, DataType, Property, Tokenization  # noqa: E402
from weaviate.classes.query import Filter, MetadataQuery  # noqa: E402
from weaviate.exceptions import WeaviateBaseError  # noqa: E402
from weaviate.util import generate_uuid5  # noqa: E402

DIM = 4

DOCS = [
    # key, title, path (FIELD tokenized), size, vector
    ("a", "retry the flaky network call", "src/net/retry.py", 10, [1.0, 0.0, 0.0, 0.0]),
    ("b", "parse the config file", "src/config/parse.py", 20, [0.0, 1.0, 0.0, 0.0]),
    ("c", "network timeout in the parser", "src/net/timeout.py", 30, [0.0, 0.0, 1.0, 0.0]),
    ("d", "unrelated docs page", "docs/index md", 40, [0.0, 0.0, 0.0, 1.0]),
]


def _uuid(key: str) -> str:
    return generate_uuid5(f"mendflow-infra-{key}")


def _create_docs(client, name: str):
    if client.collections.exists(name):
        client.collections.delete(name)
    coll = client.collections.create(
        name,
        vector_config=Configure.Vectors.self_provided(),
        properties=[
            Property(name="title", data_type=DataType.TEXT),
            Property(name="path", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
            Property(name="size", data_type=DataType.INT),
        ],
    )
    with coll.batch.fixed_size(batch_size=2) as batch:
        for key, title, path, size, vec in DOCS:
            batch.add_object(
                properties={"title": title, "path": path, "size": size},
                uuid=_uuid(key),
                vector=vec,
            )
    assert coll.batch.failed_objects == []
    assert coll.batch.failed_references == []
    return coll


@pytest.fixture
def client(weaviate_server):
    c = weaviate_server.connect()
    try:
        yield c
    finally:
        c.close()


def test_server_is_ready(weaviate_server, client):
    assert weaviate_server.host == "127.0.0.1"
    assert weaviate_server.url == f"http://127.0.0.1:{weaviate_server.http_port}"
    assert weaviate_server.grpc_port != weaviate_server.http_port
    assert client.is_ready()
    assert client.is_live()
    assert weaviate_server.ready()  # GET {url}/v1/.well-known/ready == 200
    assert weaviate_server.is_running()
    meta = client.get_meta()
    assert meta["version"].startswith("1.")
    major, minor = (int(x) for x in meta["version"].split(".")[:2])
    assert (major, minor) >= (1, 27)
    # No vectorizer modules are loaded.
    assert not any(k.startswith("text2vec") for k in (meta.get("modules") or {}))


def test_collection_batch_and_queries(client):
    coll = _create_docs(client, "InfraDocs")

    assert len(coll) == len(DOCS)
    cfg = coll.config.get()
    path_prop = next(p for p in cfg.properties if p.name == "path")
    assert path_prop.tokenization == Tokenization.FIELD

    # Deterministic ids + explicit vectors round-trip.
    obj = coll.query.fetch_object_by_id(_uuid("b"), include_vector=True)
    assert obj is not None
    assert obj.properties["title"] == "parse the config file"
    assert obj.vector["default"] == pytest.approx([0.0, 1.0, 0.0, 0.0])

    # bm25 over the word-tokenized title.
    res = coll.query.bm25(query="network", limit=10, return_metadata=MetadataQuery(score=True))
    assert {str(o.uuid) for o in res.objects} == {_uuid("a"), _uuid("c")}
    assert all(o.metadata.score > 0 for o in res.objects)

    # Hybrid: keyword "network" + explicit query vector pointing at "c".
    res = coll.query.hybrid(
        query="network",
        vector=[0.0, 0.0, 1.0, 0.0],
        alpha=0.75,
        limit=2,
        return_metadata=MetadataQuery(score=True),
    )
    assert str(res.objects[0].uuid) == _uuid("c")
    assert {str(o.uuid) for o in res.objects} == {_uuid("a"), _uuid("c")}

    # alpha=0 is pure keyword, alpha=1 pure vector.
    res = coll.query.hybrid(query="config", vector=[0.0, 0.0, 0.0, 1.0], alpha=0.0, limit=1)
    assert str(res.objects[0].uuid) == _uuid("b")
    res = coll.query.hybrid(query="config", vector=[0.0, 0.0, 0.0, 1.0], alpha=1.0, limit=1)
    assert str(res.objects[0].uuid) == _uuid("d")

    # near_vector with the explicit vectors.
    res = coll.query.near_vector(near_vector=[0.9, 0.1, 0.0, 0.0], limit=1)
    assert str(res.objects[0].uuid) == _uuid("a")

    # FIELD tokenization: the whole value is one token.
    res = coll.query.fetch_objects(filters=Filter.by_property("path").equal("src/net/retry.py"))
    assert [str(o.uuid) for o in res.objects] == [_uuid("a")]
    res = coll.query.fetch_objects(filters=Filter.by_property("path").equal("src"))
    assert res.objects == []
    res = coll.query.fetch_objects(filters=Filter.by_property("path").equal("docs/index md"))
    assert [str(o.uuid) for o in res.objects] == [_uuid("d")]

    # Numeric and combined filters; filter on bm25.
    res = coll.query.fetch_objects(filters=Filter.by_property("size").greater_or_equal(30))
    assert {str(o.uuid) for o in res.objects} == {_uuid("c"), _uuid("d")}
    res = coll.query.bm25(
        query="network",
        filters=Filter.by_property("path").equal("src/net/timeout.py"),
    )
    assert [str(o.uuid) for o in res.objects] == [_uuid("c")]

    # Re-inserting the same deterministic ids is an upsert, not a duplicate.
    with coll.batch.fixed_size(batch_size=10) as batch:
        for key, title, path, size, vec in DOCS:
            batch.add_object(
                properties={"title": title, "path": path, "size": size + 1},
                uuid=_uuid(key),
                vector=vec,
            )
    assert coll.batch.failed_objects == []
    assert len(coll) == len(DOCS)
    assert coll.query.fetch_object_by_id(_uuid("a")).properties["size"] == 11

    client.collections.delete("InfraDocs")


def test_stop_start_keeps_data(weaviate_server):
    ports = (weaviate_server.http_port, weaviate_server.grpc_port)
    data_dir = weaviate_server.data_dir

    with weaviate_server.connect() as c:
        _create_docs(c, "InfraPersist")

    # Graceful stop: the server is really down.
    weaviate_server.stop()
    assert not weaviate_server.is_running()
    assert not weaviate_server.ready()
    with pytest.raises(WeaviateBaseError):
        weaviate.connect_to_local(
            host=weaviate_server.host,
            port=weaviate_server.http_port,
            grpc_port=weaviate_server.grpc_port,
        ).close()

    weaviate_server.start()
    assert (weaviate_server.http_port, weaviate_server.grpc_port) == ports
    assert weaviate_server.data_dir == data_dir
    with weaviate_server.connect() as c:
        coll = c.collections.get("InfraPersist")
        assert len(coll) == len(DOCS)
        obj = coll.query.fetch_object_by_id(_uuid("c"), include_vector=True)
        assert obj.properties["path"] == "src/net/timeout.py"
        assert obj.vector["default"] == pytest.approx([0.0, 0.0, 1.0, 0.0])
        res = coll.query.bm25(query="network")
        assert {str(o.uuid) for o in res.objects} == {_uuid("a"), _uuid("c")}
        # A write after the restart ...
        coll.data.insert(
            {"title": "after restart", "path": "x", "size": 1}, uuid=_uuid("e"), vector=[0.5, 0.5, 0.0, 0.0]
        )

    # ... survives a hard kill (crash) too.
    weaviate_server.stop(graceful=False)
    assert not weaviate_server.ready()
    weaviate_server.start()
    with weaviate_server.connect() as c:
        coll = c.collections.get("InfraPersist")
        assert len(coll) == len(DOCS) + 1
        assert coll.query.fetch_object_by_id(_uuid("e")).properties["title"] == "after restart"
        res = coll.query.fetch_objects(filters=Filter.by_property("path").equal("x"))
        assert [str(o.uuid) for o in res.objects] == [_uuid("e")]
        c.collections.delete("InfraPersist")
