"""Credentials from Prefect blocks: the store, the cluster and the LLM key, against real servers."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml
from kubernetes import client as k
from prefect.blocks.system import Secret
from prefect_aws.client_parameters import AwsClientParameters
from prefect_aws.credentials import AwsCredentials
from prefect_aws.s3 import S3Bucket
from prefect_kubernetes.credentials import KubernetesClusterConfig, KubernetesCredentials

from mendflow.errors import ConfigError
from mendflow.launcher.kubernetes import load_configuration
from mendflow.llm.client import LLMClient
from mendflow.settings import KubernetesSettings, S3Settings, Settings
from mendflow.store import open_store
from tests.fixtures import s3 as s3_fixture
from tests.fixtures.kube import KubeCluster
from tests.fixtures.llm_server import LLMServer, llm_settings

pytestmark = pytest.mark.usefixtures("prefect_server")


def _name(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


def _aws_credentials(endpoint: str, secret: str = s3_fixture.SECRET_KEY) -> AwsCredentials:
    return AwsCredentials(
        aws_access_key_id=s3_fixture.ACCESS_KEY,
        aws_secret_access_key=secret,
        region_name=s3_fixture.REGION,
        aws_client_parameters=AwsClientParameters(endpoint_url=endpoint),
    )


def test_an_s3_bucket_block_is_the_store(s3_bucket: s3_fixture.S3Bucket, tmp_path: Path) -> None:
    name = _name("bucket")
    S3Bucket(bucket_name=s3_bucket.name, bucket_folder="ci", credentials=_aws_credentials(s3_bucket.endpoint_url)).save(
        name
    )
    store = open_store("unused", Settings(state_dir=tmp_path, s3=S3Settings(bucket_block=name)))
    store.put_bytes("repos/a/b/c/report.json", b"{}")
    assert store.url_for("repos/a/b/c/report.json") == f"s3://{s3_bucket.name}/ci/repos/a/b/c/report.json"
    assert store.get_bytes("repos/a/b/c/report.json") == b"{}"


def test_an_aws_credentials_block_reaches_the_store_url(s3_bucket: s3_fixture.S3Bucket, tmp_path: Path) -> None:
    name = _name("aws")
    _aws_credentials(s3_bucket.endpoint_url).save(name)
    # No endpoint in the settings: only the block knows where the store is.
    store = open_store(f"s3://{s3_bucket.name}/ci", Settings(state_dir=tmp_path, s3=S3Settings(credentials_block=name)))
    store.put_bytes("k/report.json", b"{}")
    assert store.get_bytes("k/report.json") == b"{}"


def test_a_missing_block_names_the_setting(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path, s3=S3Settings(bucket_block="no-such-bucket"))
    with pytest.raises(ConfigError, match="no s3-bucket block named 'no-such-bucket'") as caught:
        open_store("unused", settings)
    assert "MENDFLOW_S3__BUCKET_BLOCK" in caught.value.one_line()


def test_a_bucket_block_and_a_store_url_together_are_refused(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path, store_url="s3://x/y", s3=S3Settings(bucket_block="any"))
    with pytest.raises(ConfigError, match="both MENDFLOW_STORE_URL and MENDFLOW_S3__BUCKET_BLOCK"):
        open_store("s3://x/y", settings).check()


def test_a_kubernetes_credentials_block_reaches_the_cluster(kube_cluster: KubeCluster) -> None:
    name = _name("cluster")
    config = yaml.safe_load(kube_cluster.kubeconfig.read_text())
    KubernetesCredentials(cluster_config=KubernetesClusterConfig(config=config, context_name="mendflow-test")).save(
        name
    )
    cfg = load_configuration(Settings(kubernetes=KubernetesSettings(credentials_block=name, context="nonexistent")))
    with k.ApiClient(configuration=cfg) as api:
        assert k.CoreV1Api(api).read_namespace("default").metadata.name == "default"


def test_a_secret_block_is_the_llm_key(scripted_llm: LLMServer) -> None:
    name = _name("llm-key")
    Secret(value="sk-from-the-block").save(name)
    scripted_llm.reply("ok")
    LLMClient(llm_settings(scripted_llm, api_key="sk-from-env", api_key_block=name)).complete_text(
        "plan", [{"role": "user", "content": "hi"}]
    )
    assert scripted_llm.requests[-1]["headers"]["authorization"] == "Bearer sk-from-the-block"
