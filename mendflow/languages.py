"""Which languages a repository is written in, from its manifests and lockfiles (seed 003: the runner's toolchain
per language), and which one a run builds first.

A language counts when its manifest is at the root (``pyproject.toml``, ``go.mod``, ``package.json``, ...) or,
for Go, when a ``go.work`` or a ``go.mod`` below the root makes modules of it; with no manifest at all, the
language most source files are in (its runner then says which manifest is missing). The order is by how many source
files each has, so a Go service with a Python script or a Python package with a JavaScript docs site builds as
what it mostly is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import PurePosixPath

from mendflow.contracts import Language

_ROOT_MANIFESTS: dict[Language, tuple[str, ...]] = {
    Language.PYTHON: ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"),
    Language.GO: ("go.mod", "go.work"),
    Language.TYPESCRIPT: ("package.json",),
    Language.RUST: ("Cargo.toml",),
    Language.JAVA: ("pom.xml", "build.gradle", "build.gradle.kts"),
}
_SUFFIXES: dict[str, Language] = {
    ".py": Language.PYTHON,
    ".go": Language.GO,
    ".ts": Language.TYPESCRIPT,
    ".tsx": Language.TYPESCRIPT,
    ".mts": Language.TYPESCRIPT,
    ".js": Language.TYPESCRIPT,
    ".mjs": Language.TYPESCRIPT,
    ".cjs": Language.TYPESCRIPT,
    ".rs": Language.RUST,
    ".java": Language.JAVA,
}
# Directories that hold someone else's code, fixtures or build output: they do not say what the repository is.
_NOT_OURS = frozenset({"vendor", "node_modules", "third_party", "testdata", "target", "build", "dist", ".git"})


def detect(paths: Iterable[str]) -> list[Language]:
    """The repository's languages, most source files first; ``paths`` are its files, relative to the root."""
    manifests: set[Language] = set()
    files: Counter[Language] = Counter()
    for text in paths:
        path = PurePosixPath(text)
        if _NOT_OURS.intersection(path.parts[:-1]):
            continue
        if len(path.parts) == 1:
            manifests.update(lang for lang, names in _ROOT_MANIFESTS.items() if path.name in names)
        elif path.name == "go.mod":
            manifests.add(Language.GO)
        if (lang := _SUFFIXES.get(path.suffix)) is not None:
            files[lang] += 1
    order = list(Language)
    if not manifests and files:  # sources but no manifest (a pre-modules Go release): its runner says what is missing
        manifests = {max(files, key=lambda lang: (files[lang], -order.index(lang)))}
    return sorted(manifests, key=lambda lang: (-files[lang], order.index(lang)))


def language_of_path(path: str) -> Language | None:
    """The language of one source file, from its suffix (``.js`` counts as TypeScript: one Node toolchain)."""
    return _SUFFIXES.get(PurePosixPath(path).suffix)
