"""The npm install a job keeps for the repository's next job: reused only for the same manifests, lockfile and
toolchain, never when the repository's own code runs while installing, and out of reach of the tests."""

from __future__ import annotations

import gc
import io
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from mendflow_node.installed import IN_USE, KEPT_DIR, LENT, KeptInstall, install_key, root_scripts
from mendflow_node.project import Project

from mendflow.contracts import BuildReport, BuildStatus
from tests.fixtures.repos import RepoFactory
from tests.images.mendflow_node.helpers import LOCKS, USES_IS_NUMBER, node_env, package_json, run_node_runner
from tests.images.mendflow_runner.helpers import snapshot

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js and npm")

Files = dict[str, str | bytes | None]
OTHER_GROUP = 54321  # no job's
LOCK = (LOCKS / "package-lock.json").read_text()
# A test that tries to change the packages it sees and the kept tree, wherever the job's cache is, and writes a
# tool's cache beside the packages.
POISONS = """\
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";

const FALSE = "module.exports = () => false;\\n";

test("cannot write the packages it sees nor the kept tree, and writes a tool's cache", () => {
  assert.throws(() => writeFileSync("node_modules/is-number/index.js", FALSE), /EROFS/);
  const kept = `${process.env.MENDFLOW_JOB_CACHE}/node/installed`;
  for (const key of readdirSync(kept)) {
    assert.throws(() => writeFileSync(`${kept}/${key}/node_modules/is-number/index.js`, FALSE));
  }
  mkdirSync("node_modules/.cache/tool", { recursive: true });
  writeFileSync("node_modules/.cache/tool/made", "by a test");
});
"""


def _files(**more: str) -> Files:
    return {
        "package.json": package_json("node --test test/", **{"is-number": "7.0.0"}),
        "package-lock.json": LOCK,
        **more,
    }


def _project(tmp_path: Path, files: Files) -> Project:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(text))
    return Project.read(tmp_path)


def _key(tmp_path: Path, files: Files) -> str | None:
    return install_key(_project(tmp_path, files), node_env(tmp_path / "cache"))


def _build(make_repo: RepoFactory, where: Path, cache: Path, files: Files) -> BuildReport:
    source = snapshot(make_repo(files, name=where.name), where / "src.tar.gz")
    return BuildReport.model_validate(run_node_runner(source, where / "out", cache))


def test_the_same_manifests_lockfile_and_toolchain_have_the_same_key(tmp_path: Path) -> None:
    assert _key(tmp_path / "a", _files()) == _key(tmp_path / "b", _files(**{"src/x.js": "x"})) is not None


def test_another_lockfile_has_another_key(tmp_path: Path) -> None:
    relocked = LOCK.replace('"name": "demo"', '"name": "demo2"', 1)
    assert _key(tmp_path / "a", _files()) != _key(tmp_path / "b", {**_files(), "package-lock.json": relocked})


def test_a_workspace_packages_manifest_is_part_of_the_key(tmp_path: Path) -> None:
    member = json.dumps({"name": "member", "version": "1.0.0"})
    assert _key(tmp_path / "a", _files()) != _key(tmp_path / "b", _files(**{"packages/m/package.json": member}))


@pytest.mark.parametrize(
    "extra",
    [
        {"packages/m/package.json": json.dumps({"name": "m", "scripts": {"postinstall": "node x.js"}})},
        {"packages/m/package.json": json.dumps({"name": "m"}), "packages/m/binding.gyp": "{}"},
        {"binding.gyp": "{}"},
    ],
    ids=["workspace postinstall", "workspace native addon", "native addon"],
)
def test_an_install_that_runs_the_repositorys_code_is_never_kept(tmp_path: Path, extra: Files) -> None:
    assert _key(tmp_path, {**_files(), **extra}) is None


def test_the_roots_own_install_scripts_are_left_to_each_job(tmp_path: Path) -> None:
    manifest = json.loads(package_json("node --test test/", **{"is-number": "7.0.0"}))
    manifest["scripts"] |= {"postinstall": "node b.js", "prepare": "node a.js", "preinstall": "node c.js"}
    files = {**_files(), "package.json": json.dumps(manifest)}
    assert _key(tmp_path, files) is not None
    assert root_scripts(_project(tmp_path, files)) == ["preinstall", "postinstall", "prepare"]


def _vendored(tarball: str) -> Files:
    return {
        "package.json": package_json("node --test test/", dep="file:vendor/dep-1.0.0.tgz"),
        "vendor/dep-1.0.0.tgz": tarball,
    }


def test_a_local_tarballs_bytes_are_part_of_the_key(tmp_path: Path) -> None:
    assert _key(tmp_path / "a", _vendored("packed once")) != _key(tmp_path / "b", _vendored("packed again"))


def _unlocked(version_range: str) -> Files:
    return {"package.json": package_json("node --test test/", **{"is-number": version_range})}


def test_without_a_lockfile_the_same_manifests_have_the_same_key(tmp_path: Path) -> None:
    assert _key(tmp_path / "a", _unlocked("^7.0.0")) == _key(tmp_path / "b", _unlocked("^7.0.0")) is not None


def test_without_a_lockfile_a_changed_range_resolves_again(tmp_path: Path) -> None:
    assert _key(tmp_path / "a", _unlocked("^7.0.0")) != _key(tmp_path / "b", _unlocked("^6.0.0"))


def test_a_lockfile_added_later_has_another_key(tmp_path: Path) -> None:
    assert _key(tmp_path / "a", _unlocked("7.0.0")) != _key(tmp_path / "b", _files())


@pytest.fixture
def visible_cache() -> Iterator[Path]:
    """A job cache outside ``/tmp``, where the offline steps' sandbox mounts a fresh one: as the local launcher's,
    the tests see it (read-only)."""
    cache = Path(tempfile.mkdtemp(prefix="mendflow-node-cache-", dir="/var/tmp"))
    yield cache
    shutil.rmtree(cache, ignore_errors=True)


@pytest.mark.parametrize("locked", [True, False], ids=["lockfile", "no lockfile"])
def test_the_next_job_gets_the_kept_install_whatever_a_test_wrote_into_its_own(
    make_repo: RepoFactory, tmp_path: Path, visible_cache: Path, locked: bool
) -> None:
    cache = visible_cache
    manifests = _files() if locked else _unlocked("^7.0.0")
    first = _build(make_repo, tmp_path / "first", cache, {**manifests, "test/poison.test.mjs": POISONS})
    assert first.status == BuildStatus.PASSED, first.error_reason
    kept = next((cache / "node" / KEPT_DIR).glob("*/node_modules/is-number/index.js"))
    assert "() => false" not in kept.read_text()
    assert not list((cache / "node" / KEPT_DIR).glob("*/node_modules/.cache"))
    second = _build(make_repo, tmp_path / "second", cache, {**manifests, "test/is.test.mjs": USES_IS_NUMBER})
    assert (second.status, second.tests.passed) == (BuildStatus.PASSED, 1), second.error_reason
    assert "/node_modules, read-only" in (tmp_path / "second" / "out" / "runner.log").read_text()


USES_WORKSPACE = """\
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import isNumber from "@acme/util";

test("a scoped workspace package, what it requires and its command", () => {
  assert.equal(isNumber(3), true);
  assert.equal(execFileSync(process.execPath, ["node_modules/.bin/acme-util"], { encoding: "utf8" }), "true\\n");
});
"""


def test_a_lent_tree_serves_a_scoped_workspace_package_and_its_dependency(
    make_repo: RepoFactory, tmp_path: Path, visible_cache: Path
) -> None:
    manifest = json.loads(package_json("node --test test/", **{"is-number": "^7.0.0"})) | {"workspaces": ["packages/*"]}
    files: Files = {
        "package.json": json.dumps(manifest),
        "packages/util/package.json": json.dumps(
            {"name": "@acme/util", "version": "1.0.0", "main": "index.js", "bin": {"acme-util": "cli.js"}}
        ),
        "packages/util/index.js": 'module.exports = require("is-number");\n',
        "packages/util/cli.js": 'console.log(require("./index.js")(3));\n',
        "test/ws.test.mjs": USES_WORKSPACE,
    }
    for job in ("first", "second"):
        report = _build(make_repo, tmp_path / job, visible_cache, files)
        assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
        assert "/node_modules, read-only" in (tmp_path / job / "out" / "runner.log").read_text()


WRITES = "node -e \"require('fs').writeFileSync('{}', 'yes')\""  # a script that leaves a file where it runs
# A dependency whose install script leaves a file in its package (npm runs it in the package's directory).
BUILT_DEP = {"name": "built-dep", "version": "1.0.0", "scripts": {"install": WRITES.format("built.txt")}}
SEES = """\
import {{ test }} from "node:test";
import assert from "node:assert/strict";
import {{ readFileSync }} from "node:fs";

test("the install scripts ran", () => {{
  for (const path of {paths}) assert.equal(readFileSync(path, "utf8"), "yes");
}});
"""


def _packed(manifest: dict[str, object]) -> bytes:
    """A package as npm packs it: its manifest under ``package/`` in a gzipped tar."""
    data, packed = json.dumps(manifest).encode(), io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        entry = tarfile.TarInfo("package/package.json")
        entry.size, entry.mode = len(data), 0o644
        tar.addfile(entry, io.BytesIO(data))
    return packed.getvalue()


def _root_scripts(seen: list[str], **scripts: str) -> Files:
    """A root package with install scripts of its own, a dependency with one, and a test that sees what each left."""
    manifest = json.loads(package_json("node --test test/", **{"built-dep": "file:vendor/built-dep-1.0.0.tgz"}))
    manifest["scripts"] |= scripts
    return {
        "package.json": json.dumps(manifest),
        "vendor/built-dep-1.0.0.tgz": _packed(BUILT_DEP),
        "test/sees.test.mjs": SEES.format(paths=json.dumps(seen)),
    }


def test_the_roots_install_scripts_run_on_the_kept_tree_in_every_job(
    make_repo: RepoFactory, tmp_path: Path, visible_cache: Path
) -> None:
    files = _root_scripts(["node_modules/built-dep/built.txt", "prepared.txt"], prepare=WRITES.format("prepared.txt"))
    for job in ("first", "second"):
        report = _build(make_repo, tmp_path / job, visible_cache, files)
        assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
        assert "/node_modules, read-only" in (tmp_path / job / "out" / "runner.log").read_text()
    assert not list((visible_cache / "node" / KEPT_DIR).glob("*/prepared.txt"))


def test_a_root_script_that_writes_into_node_modules_gets_an_install_of_its_own(
    make_repo: RepoFactory, tmp_path: Path, visible_cache: Path
) -> None:
    patched = "node_modules/built-dep/patched.txt"  # as patch-package's postinstall patches installed packages
    files = _root_scripts(["node_modules/built-dep/built.txt", patched], postinstall=WRITES.format(patched))
    for job in ("first", "second"):
        report = _build(make_repo, tmp_path / job, visible_cache, files)
        assert (report.status, report.tests.passed) == (BuildStatus.PASSED, 1), report.error_reason
        assert "failed on the kept tree" in (tmp_path / job / "out" / "runner.log").read_text()
    assert not list((visible_cache / "node" / KEPT_DIR).glob("*/node_modules/built-dep/patched.txt"))


def _kept(cache: Path, key: str, links: dict[str, str] | None = None, **entries: str) -> KeptInstall:
    """A kept tree of ``entries`` (path: text) and ``links`` (path: target), with npm's hidden lockfile."""
    kept = KeptInstall(cache, key)
    packages = {path: target for path, target in (links or {}).items() if not path.startswith(".bin/")}  # as npm's
    locked = {f"node_modules/{path}": {"resolved": target, "link": True} for path, target in packages.items()}
    hidden = json.dumps({"packages": locked})
    for name, text in {"pkg/index.js": "x", ".bin/tool": "#!", ".package-lock.json": hidden, **entries}.items():
        (kept.tree / name).parent.mkdir(parents=True, exist_ok=True)
        (kept.tree / name).write_text(text)
    for path, target in (links or {}).items():
        (kept.tree / path).parent.mkdir(parents=True, exist_ok=True)
        (kept.tree / path).symlink_to(target)
    (kept.tree.parent / IN_USE).touch()
    return kept


def test_a_lent_tree_is_one_bind_a_link_per_package_and_a_copy_of_the_tools_caches(tmp_path: Path) -> None:
    kept = _kept(tmp_path / "cache", "a", **{".cache/babel/x": "cached"})
    node_modules = tmp_path / "src" / "node_modules"
    node_modules.parent.mkdir()
    assert kept.lend(node_modules) == ((kept.tree, node_modules / LENT),)
    links = {name: os.readlink(node_modules / name) for name in ("pkg", ".bin/tool", ".package-lock.json")}
    assert links == {
        "pkg": f"{LENT}/pkg",
        ".bin/tool": f"../{LENT}/.bin/tool",
        ".package-lock.json": f"{LENT}/.package-lock.json",
    }
    assert list((node_modules / LENT).iterdir()) == []  # the mount point
    assert (node_modules / ".cache" / "babel" / "x").read_text() == "cached"


def test_a_scopes_packages_and_the_commands_are_linked_one_by_one_with_the_trees_own_links_kept(
    tmp_path: Path,
) -> None:
    links = {"@acme/util": "../../packages/util", ".bin/util": "../@acme/util/cli.js"}
    kept = _kept(tmp_path / "cache", "a", links, **{"@acme/core/index.js": "x"})
    node_modules = tmp_path / "src" / "node_modules"
    node_modules.parent.mkdir()
    assert kept.lend(node_modules) is not None
    assert os.readlink(node_modules / "@acme" / "core") == f"../{LENT}/@acme/core"
    assert {path: os.readlink(node_modules / path) for path in links} == links


def test_a_tree_with_a_link_inside_a_package_is_not_lent(tmp_path: Path) -> None:
    # Relative to where the package is lent, one level deeper than node_modules, the link would miss its target.
    kept = _kept(tmp_path / "cache", "a", {"pkg/node_modules/util": "../../../packages/util"})
    (tmp_path / "src").mkdir()
    assert kept.lend(tmp_path / "src" / "node_modules") is None
    assert not (tmp_path / "src" / "node_modules").exists()


def test_a_tree_a_job_uses_is_not_dropped_for_another_key(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    used = _kept(cache, "a")
    (tmp_path / "src").mkdir()
    assert used.lend(tmp_path / "src" / "node_modules") is not None
    (tmp_path / "fresh").mkdir()
    KeptInstall(cache, "b").keep(tmp_path / "fresh")
    assert used.tree.is_dir()
    del used
    gc.collect()  # the job ended: its lock is gone
    (tmp_path / "newer").mkdir()
    KeptInstall(cache, "c").keep(tmp_path / "newer")
    assert sorted(p.name for p in (cache / KEPT_DIR).iterdir()) == ["c"]


@pytest.mark.skipif(os.geteuid() != 0, reason="gives files to another group")
def test_a_moved_install_belongs_to_the_caches_group(tmp_path: Path) -> None:
    # the local launcher's jobs are other uids in the repository cache's group; the install keeps its job's group
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chown(cache, -1, OTHER_GROUP)
    cache.chmod(0o2770)
    node_modules = tmp_path / "src" / "node_modules"
    (node_modules / "pkg").mkdir(parents=True)
    (node_modules / "pkg" / "index.js").write_text("x")
    kept = KeptInstall(cache, "a")
    kept.keep(node_modules, move=True)
    assert {p.stat().st_gid for p in kept.tree.rglob("*")} == {OTHER_GROUP}
