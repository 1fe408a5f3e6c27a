"""cargo's JSON messages read back, on what the real cargo prints: a workspace whose dependency does not compile, the
shape of paste 1.0.15, whose dev-dependency ``paste-test-suite`` 0.0.0 on crates.io is a placeholder (lib.rs: ``@``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mendflow_rust import messages

pytestmark = pytest.mark.skipif(shutil.which("cargo") is None, reason="needs the Rust toolchain")

MANIFEST = '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{dependency}\n'
PLACEHOLDER_MANIFEST = '[package]\nname = "placeholder-suite"\nversion = "0.0.0"\nedition = "2021"\n'


@pytest.fixture(scope="module")
def broken_dependency_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """``cargo build --message-format=json`` of a workspace whose path dependency, outside it (``../dep``, where
    cargo names files by their absolute path, as it does a registry crate's), is ``@``: both streams, as one."""
    tmp = tmp_path_factory.mktemp("broken-dependency")
    (tmp / "dep" / "src").mkdir(parents=True)
    (tmp / "dep" / "Cargo.toml").write_text(PLACEHOLDER_MANIFEST, encoding="utf-8")
    (tmp / "dep" / "src" / "lib.rs").write_text("@\n", encoding="utf-8")
    (tmp / "app" / "src").mkdir(parents=True)
    dependency = 'placeholder-suite = { path = "../dep" }'
    (tmp / "app" / "Cargo.toml").write_text(MANIFEST.format(dependency=dependency), encoding="utf-8")
    (tmp / "app" / "src" / "lib.rs").write_text("pub fn one() -> u8 {\n    1\n}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    env.update(CARGO_TARGET_DIR=str(tmp / "target"), CARGO_TERM_COLOR="never")
    argv = ["cargo", "build", "--message-format=json", "--offline"]
    built = subprocess.run(argv, cwd=tmp / "app", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert built.returncode == 101, built.stdout
    return built.stdout, tmp / "app"


def test_a_dependency_that_does_not_compile_is_named_with_the_compilers_words(
    broken_dependency_build: tuple[str, Path],
) -> None:
    out, root = broken_dependency_build
    assert messages.dependency_errors(out, root) == [
        "placeholder-suite 0.0.0 (a dependency) does not compile: expected item, found `@` (src/lib.rs:1)"
    ]


def test_a_dependencys_error_is_no_diagnostic_of_the_workspace(broken_dependency_build: tuple[str, Path]) -> None:
    out, root = broken_dependency_build
    assert messages.diagnostics(out, root) == []


def test_cargos_own_error_line_is_said_rather_than_its_last_json_message(
    broken_dependency_build: tuple[str, Path],
) -> None:
    out, _ = broken_dependency_build
    said = "error: could not compile `placeholder-suite` (lib) due to 1 previous error"
    assert messages.cargo_error(out) == said


def test_cargos_errors_that_say_what_is_wrong_are_said_rather_than_its_summary(tmp_path: Path) -> None:
    """log 0.4.22 as crates.io serves it: its manifest names integration tests its package leaves out."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("", encoding="utf-8")
    tests = "".join(f'[[test]]\nname = "{n}"\npath = "tests/{n}.rs"\n\n' for n in ("integration", "macros"))
    (tmp_path / "Cargo.toml").write_text(MANIFEST.format(dependency="") + "\n" + tests, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    env.update(CARGO_TARGET_DIR=str(tmp_path / "target"), CARGO_TERM_COLOR="never")
    argv = ["cargo", "test", "--no-run", "--message-format=json", "--offline"]
    built = subprocess.run(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert messages.cargo_error(built.stdout) == (
        f"error: can't find integration-test `integration` at path `{tmp_path}/tests/integration.rs`; "
        f"error: can't find integration-test `macros` at path `{tmp_path}/tests/macros.rs`"
    )
