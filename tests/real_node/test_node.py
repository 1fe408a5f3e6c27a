"""The real node itself: registered Ready, and kept for the namespaces placed on it."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client as k

from tests.fixtures.kube_node import NODE_LABEL, NODE_NAME, TAINT_KEY, RealNode, image_digests, remove_other_images
from tests.fixtures.kube_node_host import SOCK, run_tool

pytestmark = [pytest.mark.real_node, pytest.mark.slow]


def node(real_node: RealNode) -> Any:
    return k.CoreV1Api(real_node.cluster.api_client()).read_node(NODE_NAME)


def test_node_is_ready_with_its_internal_ip(real_node: RealNode) -> None:
    status = node(real_node).status
    assert {c.type: c.status for c in status.conditions}["Ready"] == "True"
    assert {"type": "InternalIP", "address": real_node.host_ip} in [a.to_dict() for a in status.addresses]


def test_node_is_tainted_so_only_placed_pods_land_there(real_node: RealNode) -> None:
    found = node(real_node)
    assert [(t.key, t.effect) for t in found.spec.taints] == [(TAINT_KEY, "NoSchedule")]
    assert found.metadata.labels[NODE_LABEL[0]] == NODE_LABEL[1]


def test_an_earlier_builds_image_leaves_the_store_and_this_builds_stay(real_node: RealNode, tmp_path: Path) -> None:
    # The store persists under the cache across runs; each new build of the images must replace the last one's.
    ctr = ["ctr", "-a", str(SOCK), "-n", "k8s.io"]
    run_tool(*ctr, "images", "import", "--no-unpack", "--base-name", OLD_IMAGE, str(_empty_image(tmp_path)))
    before = image_digests(ctr)
    old = before[f"{OLD_IMAGE}:old"]

    remove_other_images(ctr, before, kept={before[ref] for ref in real_node.images.values()})

    assert image_digests(ctr) == {name: digest for name, digest in before.items() if digest != old}


OLD_IMAGE = "registry.invalid/mendflow/earlier-build"


def _empty_image(tmp_path: Path) -> Path:
    """An OCI archive of an image with no layers, tagged ``old``: a digest no image of this build has."""
    config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}})
    blobs = {"config": config.encode()}
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": _descriptor("application/vnd.oci.image.config.v1+json", blobs["config"]),
        "layers": [],
    }
    blobs["manifest"] = json.dumps(manifest).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            {**_descriptor(manifest["mediaType"], blobs["manifest"]), "annotations": {ANNOTATION_REF: "old"}}
        ],
    }
    files = {"oci-layout": b'{"imageLayoutVersion": "1.0.0"}', "index.json": json.dumps(index).encode()}
    files |= {f"blobs/sha256/{hashlib.sha256(b).hexdigest()}": b for b in blobs.values()}
    archive = tmp_path / "old.tar"
    with tarfile.open(archive, "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


ANNOTATION_REF = "org.opencontainers.image.ref.name"


def _descriptor(media_type: str, data: bytes) -> dict[str, Any]:
    return {"mediaType": media_type, "digest": f"sha256:{hashlib.sha256(data).hexdigest()}", "size": len(data)}
