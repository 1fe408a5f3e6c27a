"""Java tests the way JUnit and Surefire find them: where a target's new test class goes (its module's
``src/test/java``, the package of its source's ``package`` clause), what such a file must declare to be found,
which JUnit (and assertion libraries) the module's build files name, and which methods are its tests.

A reactor module is the directory holding the source's ``src/main/java`` (else the nearest one above it with a
build file); build files are read as text (dependencies by coordinates), never run.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

import pygit2

from mendflow.testgen.layout import READ_LIMIT, blob_text

_MAIN_JAVA = ("src", "main", "java")


def _index(parts: tuple[str, ...], sub: tuple[str, ...]) -> int:
    for i in range(len(parts) - len(sub) + 1):
        if parts[i : i + len(sub)] == sub:
            return i
    return -1


def module_of(p: PurePosixPath, files: list[str]) -> str:
    """The Maven/Gradle module directory of a Java source ('' or 'dir/'): the one holding its ``src/main/java``,
    else the nearest directory above it with a build file."""
    at = _index(p.parts, _MAIN_JAVA)
    if at >= 0:
        return "".join(f"{part}/" for part in p.parts[:at])
    for parent in p.parents:
        where = "" if parent.as_posix() == "." else f"{parent.as_posix()}/"
        if any(f"{where}{build}" in files for build in _JAVA_BUILD_FILES):
            return where
    return ""


_JAVA_BUILD_FILES = ("pom.xml", "build.gradle", "build.gradle.kts")


def misplaced(path: str, content: str) -> str | None:
    """What in a Java test file keeps Surefire from finding it at ``path``: the package or the class name."""
    package, cls = declared_names(path)
    code = _code(content)
    declared = package_of(code)
    if (declared or "") != package:
        said = f"declares package {declared}" if declared else "declares no package"
        want = f"`package {package};`" if package else "no package clause (the default package)"
        return f"{said}; its path needs {want}"
    if not re.search(rf"\b(?:class)\s+{re.escape(cls)}\b", code):
        return f"declares no class {cls}: the file's class must be named after the file"
    return None


def declared_names(path: str) -> tuple[str, str]:
    """The package and the class name a Java test file at ``path`` must declare."""
    p = PurePosixPath(path)
    at = _index(p.parts, _TEST_JAVA)
    package = ".".join(p.parts[at + len(_TEST_JAVA) : -1]) if at >= 0 else ""
    return package, p.stem


_TEST_JAVA = ("src", "test", "java")
_JAVA_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)


def package_of(source: str) -> str | None:
    """The package a Java source declares ('' for none), None for an empty text."""
    if not source.strip():
        return None
    m = _JAVA_PACKAGE.search(_code(source))
    return m.group(1) if m else ""


_JUPITER = "JUnit 5 Jupiter (org.junit.jupiter.api.Test, static org.junit.jupiter.api.Assertions.*)"
_JUNIT4 = "JUnit 4 (org.junit.Test, static org.junit.Assert.*; a public class with public void test methods)"
_DEPENDENCY = re.compile(r"<dependency>(.*?)</dependency>", re.S)
_XML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_COORDINATE = re.compile(r"<(groupId|artifactId)>\s*([^<\s]+)\s*</\1>")
_GRADLE_DEPENDENCY = re.compile(r"""["']([\w.\-]+):([\w.\-]+)(?::[^"']*)?["']""")


def dependencies(tree: pygit2.Tree, files: list[str], target: str) -> set[str]:
    """``group:artifact`` of every dependency the build files of ``target``'s module and the directories above it
    name (managed ones too): Maven's pom.xml, Gradle's build files and version catalogue."""
    module = module_of(PurePosixPath(target), files) if target else ""
    dirs = [module] + [f"{d.as_posix()}/" for d in PurePosixPath(module or ".").parents if d.as_posix() != "."]
    dirs = list(dict.fromkeys([*dirs, ""]))
    found: set[str] = set()
    for where in dirs:
        for name in (*_JAVA_BUILD_FILES, "gradle/libs.versions.toml"):
            text = blob_text(tree, f"{where}{name}", READ_LIMIT) or ""
            if name == "pom.xml":
                for block in _DEPENDENCY.findall(_XML_COMMENT.sub("", text)):
                    coords: dict[str, str] = {}
                    for key, value in _COORDINATE.findall(block):
                        coords.setdefault(key, value)  # the dependency's own, not an exclusion's below it
                    found.add(f"{coords.get('groupId', '')}:{coords.get('artifactId', '')}")
            else:
                found |= {f"{g}:{a}" for g, a in _GRADLE_DEPENDENCY.findall(text)}
                found |= {f"{g}:{a}" for g, a in re.findall(r'module\s*=\s*"([\w.\-]+):([\w.\-]+)"', text)}
    return found


def framework(tree: pygit2.Tree, files: list[str], target: str) -> str:
    """The JUnit ``target``'s module uses, and its assertion and mocking libraries, in words for the prompt."""
    return _framework_words(dependencies(tree, files, target))


def _framework_words(deps: set[str]) -> str:
    """JUnit 5 Jupiter when any org.junit.jupiter artifact (or JUnit's BOM) is there, JUnit 4 when only
    junit:junit is; the assertion libraries beside it (AssertJ, Hamcrest) and Mockito named when present."""
    groups = {d.split(":", 1)[0] for d in deps}
    if "org.junit.jupiter" in groups or "org.junit:junit-bom" in deps:
        words = _JUPITER
    elif "junit:junit" in deps:
        words = _JUNIT4
    else:
        words = f"{_JUPITER} (no JUnit dependency was found in the build files)"
    extras = [
        lib
        for lib, present in (
            ("AssertJ (org.assertj.core.api.Assertions.assertThat)", "org.assertj" in groups),
            ("Hamcrest (org.hamcrest.MatcherAssert.assertThat, org.hamcrest.Matchers)", "org.hamcrest" in groups),
            ("Mockito (org.mockito.Mockito)", "org.mockito" in groups),
        )
        if present
    ]
    return f"{words}; also available: {', '.join(extras)}" if extras else words


_ARGS = r"(?:\s*\((?:[^()]|\([^()]*\))*\))?"  # an annotation's arguments, one level of nested parentheses
_JAVA_TEST = re.compile(
    r"@(?:org\.junit\.(?:jupiter\.api\.|jupiter\.params\.)?)?(?:Test|ParameterizedTest|RepeatedTest)\b"
    + _ARGS
    + r"(?:\s*@[\w.]+"
    + _ARGS
    + r")*\s*(?:(?:public|protected|private|static|final|synchronized)\s+)*void\s+(\w+)\s*\("
)
_JAVA_NOISE = re.compile(r'"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*(?:.|\n)*?\*/|//[^\n]*')


def _code(source: str) -> str:
    """Java source with its comments and string and char literals blanked (an @Test in them is no test)."""
    return _JAVA_NOISE.sub(lambda m: '""' if m.group(0)[0] in "\"'" else " ", source)


def test_methods(content: str) -> list[str]:
    """The test methods a JUnit 4/5 file declares (@Test, @ParameterizedTest, @RepeatedTest), once each."""
    return list(dict.fromkeys(_JAVA_TEST.findall(_code(content))))


def rules(paths: dict[str, str]) -> str:
    """Each Java file's package clause and class (the path's), and what keeps its tests selectable."""
    lines = []
    for dst in sorted(paths.values()):
        package, cls = declared_names(dst)
        clause = f"`package {package};`" if package else "no package clause"
        lines.append(f"- {dst}: {clause}, one top-level class `{cls}`")
    return (
        "Each file starts with its package clause (the package of the class under test, so package-private code\n"
        "is testable) and declares the one top-level class named after the file:\n"
        + "\n".join(lines)
        + "\nEvery test is a void method annotated @Test (or @ParameterizedTest) directly in that class: no @Nested\n"
        "classes, no @TestFactory, no @Disabled/@Ignore tests."
    )


def test_path(source: PurePosixPath, files: list[str], tree: pygit2.Tree) -> str:
    """``<module>/src/test/java/<package>/FooMendflowTest.java`` for the source ``Foo.java``."""
    declared = package_of(blob_text(tree, source.as_posix(), READ_LIMIT) or "")
    pkg = (declared or "").replace(".", "/")
    if declared is None:  # no package clause read: the directories below src/main/java name it
        at = _index(source.parts, _MAIN_JAVA)
        pkg = "/".join(source.parts[at + len(_MAIN_JAVA) : -1]) if at >= 0 else ""
    return f"{module_of(source, files)}src/test/java/{pkg + '/' if pkg else ''}{source.stem}MendflowTest.java"
