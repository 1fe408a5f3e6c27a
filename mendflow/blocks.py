"""Credentials kept as Prefect blocks, loaded on the trusted side only and only when a setting names one.

A platform team that runs Prefect keeps its secrets there already: an ``S3Bucket`` or ``AwsCredentials``
block (prefect-aws) for the store, a ``KubernetesCredentials`` block (prefect-kubernetes) for the cluster, a
``Secret`` block for the LLM key. A setting names the block (``MENDFLOW_S3__BUCKET_BLOCK``, …); the block wins
over the environment's keys for what it holds. The libraries are imported here, lazily: boto3 and the
Kubernetes client are slow to import and most commands need neither. Jobs never see any of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import SecretStr

from mendflow.errors import ConfigError
from mendflow.settings import KubernetesSettings, S3Settings

if TYPE_CHECKING:
    from prefect.blocks.core import Block

BlockT = TypeVar("BlockT", bound="Block")


def load(block_type: type[BlockT], name: str, setting: str) -> BlockT:
    """The block ``name`` of ``block_type`` from the Prefect server, or one ConfigError naming the setting."""
    try:
        return cast(BlockT, block_type.load(name))  # sync context: load returns the block itself
    except ValueError as exc:  # Prefect: no block document of that type and name
        kind = block_type.get_block_type_slug()
        raise ConfigError(
            f"no {kind} block named {name!r} on the Prefect server",
            hint=f"create it (prefect block create {kind}) or fix {setting}",
        ) from exc
    except Exception as exc:  # the API is unreachable or refuses us
        raise ConfigError(
            f"cannot load block {name!r} from the Prefect server: {type(exc).__name__}: {exc}",
            hint=f"check PREFECT_API_URL, or unset {setting} to use the environment's credentials",
        ) from exc


def s3_bucket(settings: S3Settings) -> tuple[str, str, S3Settings]:
    """``(bucket, prefix, settings with the block's credentials)`` from ``settings.bucket_block``."""
    from prefect_aws.s3 import S3Bucket

    assert settings.bucket_block is not None
    bucket = load(S3Bucket, settings.bucket_block, "MENDFLOW_S3__BUCKET_BLOCK")
    return bucket.bucket_name, (bucket.bucket_folder or "").strip("/"), _with_credentials(settings, bucket.credentials)


def s3_credentials(settings: S3Settings) -> S3Settings:
    """``settings`` with the keys, region and endpoint of the ``AwsCredentials`` block it names."""
    from prefect_aws.credentials import AwsCredentials

    if settings.credentials_block is None:
        return settings
    block = load(AwsCredentials, settings.credentials_block, "MENDFLOW_S3__CREDENTIALS_BLOCK")
    return _with_credentials(settings, block)


def _with_credentials(settings: S3Settings, credentials: Any) -> S3Settings:
    """Keys from an ``AwsCredentials`` or ``MinIOCredentials`` block; what the block leaves unset stays."""
    key_id = getattr(credentials, "aws_access_key_id", None) or getattr(credentials, "minio_root_user", None)
    secret = getattr(credentials, "aws_secret_access_key", None) or getattr(credentials, "minio_root_password", None)
    params = getattr(credentials, "aws_client_parameters", None)
    endpoint = getattr(params, "endpoint_url", None) if params is not None else None
    update: dict[str, Any] = {
        "access_key_id": SecretStr(key_id) if key_id else settings.access_key_id,
        "secret_access_key": secret if isinstance(secret, SecretStr) else settings.secret_access_key,
        "region_name": getattr(credentials, "region_name", None) or settings.region_name,
        "endpoint_url": endpoint or settings.endpoint_url,
    }
    return settings.model_copy(update=update)


def kubeconfig(settings: KubernetesSettings) -> tuple[dict[str, Any], str | None] | None:
    """``(kubeconfig as a dict, context)`` from the ``KubernetesCredentials`` block named, else None."""
    if settings.credentials_block is None:
        return None
    from prefect_kubernetes.credentials import KubernetesCredentials

    block = load(KubernetesCredentials, settings.credentials_block, "MENDFLOW_KUBERNETES__CREDENTIALS_BLOCK")
    if block.cluster_config is None:
        raise ConfigError(
            f"KubernetesCredentials block {settings.credentials_block!r} has no cluster config",
            hint="save the block with cluster_config=KubernetesClusterConfig.from_file(...)",
        )
    return dict(block.cluster_config.config), block.cluster_config.context_name


def secret(name: str, setting: str) -> SecretStr:
    """The value of the ``Secret`` block ``name``."""
    from prefect.blocks.system import Secret

    value = load(Secret, name, setting).get()
    return SecretStr(value if isinstance(value, str) else str(value))
