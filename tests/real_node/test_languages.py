"""B1 of each language's example as a Job on the real kubelet node, in that language's CI image: the same
examples the local launcher's tests build (tests/flows/test_languages.py), here installing their dependencies from
the pod itself, through this machine's egress and the CA bundle ConfigMap the launcher mounts."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from flows.ci import ci_build
from mendflow.contracts import BuildStatus, Language
from mendflow.settings import Settings
from mendflow.store import open_store
from tests.fixtures.kube_node import NODE_NAME, RealNode
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_go import helpers as go
from tests.images.mendflow_java import helpers as java
from tests.images.mendflow_node import helpers as node
from tests.images.mendflow_rust import helpers as rust
from tests.real_node.conftest import PodLog, wait_gone

pytestmark = [pytest.mark.real_node, pytest.mark.slow, pytest.mark.usefixtures("prefect_server")]


@dataclass(frozen=True)
class Example:
    language: Language
    image: str  # the CI image's name in the index
    files: Callable[[], dict[str, str | bytes | None]]
    name: str
    passed: int  # its tests, as the local launcher's tests count them
    log_says: bytes = b""  # a line the job's runner.log holds


EXAMPLES = [
    # The pod's empty build cache starts as the image's standard library seed, rather than compiling it.
    pytest.param(
        Example(Language.GO, "ci-runner-go", go.example_files, "ratelimit", 4, b"seeded with the image's standard"),
        id="go",
    ),
    pytest.param(Example(Language.TYPESCRIPT, "ci-runner-node", node.example_files, "invoice", 6), id="typescript"),
    # The JVM reads no PEM bundle: it trusts the egress's CA through the launcher's truststore key.
    pytest.param(Example(Language.JAVA, "ci-runner-java", java.example_files, "isbn", 5), id="java"),
    pytest.param(Example(Language.RUST, "ci-runner-rust", rust.example_files, "duration", 4), id="rust"),
]


@pytest.mark.parametrize("example", EXAMPLES)
def test_b1_of_the_example_passes_with_coverage_in_its_own_image_on_the_real_node(
    example: Example,
    real_node: RealNode,
    node_env: Settings,
    node_namespace: str,
    pod_log: PodLog,
    make_repo: RepoFactory,
) -> None:
    if example.image not in real_node.images:  # the node imports what the index held when it started
        pytest.skip(f"{example.image} is not in the image index (scripts/build-images.sh)")
    repo = make_repo(example.files(), name=example.name)

    started = time.monotonic()
    report = ci_build(repo=str(repo), branch="main", stage="B1")
    took = time.monotonic() - started

    assert (report.language, report.status) == (example.language, BuildStatus.PASSED), report.error_reason
    assert report.tests.passed == example.passed
    assert report.coverage is not None and report.coverage.covered_lines > 0
    assert len(pod_log.pods) == 1, pod_log.pods  # one attempt, one pod
    pod = next(iter(pod_log.pods.values()))
    assert pod.node_name == NODE_NAME  # a real container ran it, not kwok
    assert pod.image == f"{node_env.kubernetes.image_registry}/{example.image}:{node_env.kubernetes.image_tag}"
    assert pod.phase == "Succeeded"
    assert wait_gone(real_node, node_namespace) == []
    store = open_store(node_env.resolved_store_url(), node_env)
    keys = store.list(f"repos/local/{example.name}/{report.commit_sha}")
    log = next(key for key in keys if key.endswith("runner.log"))
    assert example.log_says in store.get_bytes(log)
    pod_sec = f"{pod.finished - pod.created:.1f}s" if pod.finished is not None else "?"
    sys.stderr.write(f"\nB1 {example.language.value}: pod seen->finished {pod_sec}, ci_build {took:.1f}s\n")
