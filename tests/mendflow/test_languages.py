from __future__ import annotations

from mendflow.contracts import Language
from mendflow.languages import detect


def test_a_python_package_is_python() -> None:
    assert detect(["pyproject.toml", "src/calc/__init__.py", "tests/test_calc.py"]) == [Language.PYTHON]


def test_a_go_module_is_go() -> None:
    assert detect(["go.mod", "go.sum", "limit.go", "limit_test.go"]) == [Language.GO]


def test_a_go_module_below_the_root_makes_a_go_repository() -> None:
    assert detect(["README.md", "server/go.mod", "server/main.go"]) == [Language.GO]


def test_several_languages_come_most_source_files_first() -> None:
    paths = ["go.mod", "a.go", "b.go", "c.go", "pyproject.toml", "tools/gen.py", "package.json", "web/app.ts"]
    assert detect(paths) == [Language.GO, Language.PYTHON, Language.TYPESCRIPT]


def test_a_tie_keeps_the_languages_order() -> None:
    assert detect(["Cargo.toml", "pom.xml", "src/lib.rs", "src/Main.java"]) == [Language.RUST, Language.JAVA]


def test_a_manifest_below_the_root_is_not_the_repositorys_language() -> None:
    assert detect(["go.mod", "main.go", "docs/package.json", "docs/site.js", "docs/more.js"]) == [Language.GO]


def test_vendored_and_fixture_code_does_not_count() -> None:
    paths = ["pyproject.toml", "pkg/mod.py", "vendor/x/go.mod", "testdata/y/go.mod", "node_modules/z/index.js"]
    assert detect(paths) == [Language.PYTHON]


def test_a_repository_of_no_known_language_has_none() -> None:
    assert detect(["README.md", "main.c", "Makefile"]) == []


def test_sources_without_any_manifest_are_their_language() -> None:
    # github.com/pkg/errors v0.9.1 as the module proxy serves it: no go.mod, Go files only.
    assert detect(["LICENSE", "errors.go", "errors_test.go", "stack.go"]) == [Language.GO]
