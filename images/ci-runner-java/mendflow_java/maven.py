"""What the Java runner knows of Maven: its command line, the repository's wrapper, the trusted side's
repository, and what a run's output and files say.

Maven reads the repository's own ``.mvn/maven.config`` and ``.mvn/jvm.config`` by itself; the runner adds only
what a CI job needs (batch mode, no transfer progress, the job's local repository) and JaCoCo's agent and report,
by full coordinates so that no plugin prefix has to be resolved from metadata.
"""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

POM, WRAPPER, WRAPPER_PROPERTIES = "pom.xml", "mvnw", ".mvn/wrapper/maven-wrapper.properties"
GRADLE_BUILDS = ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts")
CENTRAL = "https://repo.maven.apache.org/maven2"
JACOCO = "org.jacoco:jacoco-maven-plugin:0.8.14"
# go-offline by full coordinates: the ``dependency:`` prefix needs plugin-group metadata, and one cached miss of
# it (``*.lastUpdated``) fails every later run.
GO_OFFLINE = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:go-offline"
# A test filter that matches no method: the run resolves what the test phase loads (surefire's provider, JaCoCo's
# agent) without running a test.
RESOLVE_ONLY_METHOD = "mendflowResolvesOnly"
# Batch mode; and the JVM's proxy properties (where relay.py sets them) honoured by Maven 3.9's resolver too,
# which otherwise reads proxies from settings.xml only (3.8's transport reads both).
BATCH = ["-B", "-ntp", "-Dstyle.color=never", "-Daether.connector.http.useSystemProperties=true"]
# A JVM (Maven, and each forked test JVM) that reports its own crash instead of leaving a core behind.
JOB_JAVA_OPTIONS = "-XX:-UsePerfData"
# JaCoCo's report goal when no test JVM ran its agent (commons-io 2.6's surefire <argLine>-Xmx25M</argLine>).
NO_EXECUTION_DATA = "Skipping JaCoCo execution due to missing execution data file"
# Surefire's words where the build skips its tests (``<skip>``, ``skipTests``, ``maven.test.skip``): commons-logging
# 1.3.4 runs them after ``package``, with failsafe, which ``mvn test`` never reaches.
SUREFIRE_SKIPPED = "Tests are skipped."

_FAILED_GOAL = re.compile(r"^\[ERROR\] (Failed to execute goal .*?)(?: -> \[Help 1\])?$")
_OFFLINE_MISS = re.compile(
    r"offline mode|has not been downloaded from it before|Cannot access \S+ in offline|"
    r"Could not resolve dependencies|Non-resolvable (?:parent|import) POM|Plugin .* could not be resolved|"
    r"Could not find artifact|"
    # Maven 3.8's legacy resolution, as surefire 3.0.0-M7 uses it for its provider (maven-resources-plugin 3.3.1)
    r"required artifacts? (?:is|are) missing|: Missing:$"
)
# Maven 3.8's list under "Missing:": ``1) org.apache.maven.surefire:surefire-junit4:jar:3.0.0-M7``, not indented.
_MISSING_ITEM = re.compile(r"^\[ERROR\] \d+\) (\S+)$")
_ADVICE = ("[Help", "To see the full stack", "Re-run Maven", "For more information", "After correcting")
# Surefire's own words for a test JVM that died (Maven's help links name PluginExecutionException for any failure).
_CRASH = re.compile(r"The forked VM terminated|There was an error in the forked process|Crashed tests:")
_SNAPSHOT = re.compile(rb"-SNAPSHOT\s*<")


def jvm_options(existing: str, tmpdir: str | None) -> dict[str, str]:
    """``MAVEN_OPTS`` for Maven's own JVM: the job's options, and its temp dir, which the JVM takes from
    ``java.io.tmpdir`` (``/tmp``) whatever ``TMPDIR`` says — and a phase may write only its own."""
    temp = f"-Djava.io.tmpdir={tmpdir}" if tmpdir else ""
    return {"MAVEN_OPTS": " ".join(f for f in (existing, JOB_JAVA_OPTIONS, temp) if f)}


def home_options(env: dict[str, str]) -> dict[str, str]:
    """``JAVA_TOOL_OPTIONS`` naming ``$HOME`` as ``user.home`` for every JVM, forked test JVMs too: the JVM reads
    it from the passwd entry, and a job's uid has none, so it was "?" (commons-lang3's testGetUserHome failed,
    and a tool writing under ``~`` wrote into a directory named "?")."""
    home = env.get("HOME")
    if not home:
        return {}
    return {"JAVA_TOOL_OPTIONS": " ".join(f for f in (env.get("JAVA_TOOL_OPTIONS", ""), f"-Duser.home={home}") if f)}


class WrapperError(ValueError):
    """A ``mvnw`` whose distribution cannot come from the repository this job may reach."""


def settings_xml(repository: str) -> str:
    """A settings file routing every repository a pom names through ``repository`` (the trusted side's mirror)."""
    return (
        '<settings xmlns="http://maven.apache.org/SETTINGS/1.2.0">\n  <mirrors>\n    <mirror>\n'
        "      <id>mendflow</id>\n      <mirrorOf>*</mirrorOf>\n"
        f"      <url>{_escape(repository)}</url>\n    </mirror>\n  </mirrors>\n</settings>\n"
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def wrapper_distribution(src: Path) -> str | None:
    """The distribution ``mvnw`` would install (``distributionUrl``), or ``None`` when the repository has no
    wrapper to honour."""
    properties = src / WRAPPER_PROPERTIES
    if not (src / WRAPPER).is_file() or not properties.is_file():
        return None
    for line in properties.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "distributionUrl":
            return value.strip().replace("\\:", ":")
    raise WrapperError(f"{WRAPPER_PROPERTIES} names no distributionUrl")


def wrapper_allowed(url: str, repository: str) -> bool:
    """Whether ``mvnw``'s download comes from the repository the dependency phase may reach."""
    return urlsplit(url).hostname == urlsplit(repository).hostname


def test_source_files(src: Path) -> list[PurePosixPath]:
    """The test classes' source files (``src/test/java`` of the build's own modules), relative to ``src``, sorted."""
    found = [
        p.relative_to(src)
        for module in module_dirs(src)
        for p in (module / "src/test/java").rglob("*.java")
        if not any(part == "target" or part.startswith(".") for part in p.relative_to(src).parts)
    ]
    return sorted(PurePosixPath(p.as_posix()) for p in found)


def class_name(source: PurePosixPath) -> str:
    """``core/src/test/java/org/x/FooTest.java`` → ``org.x.FooTest``."""
    parts = source.parts
    at = next(i for i in range(len(parts)) if parts[i : i + 3] == ("src", "test", "java"))
    return ".".join((*parts[at + 3 : -1], source.stem))


def resolve_only_filter(src: Path) -> str | None:
    """A ``-Dtest`` value naming a real test class and a method it lacks, or ``None`` without test sources."""
    sources = [s for s in test_source_files(src) if s.stem.endswith(("Test", "Tests")) or s.stem.startswith("Test")]
    return f"{class_name(sources[0])}#{RESOLVE_ONLY_METHOD}" if sources else None


def uses_snapshots(src: Path) -> bool:
    """Whether any pom names a ``-SNAPSHOT`` version: those change on the server, so a cached resolution of
    them is never reused."""
    return any(_SNAPSHOT.search(p.read_bytes()) for p in poms(src))


def poms(src: Path) -> list[Path]:
    """The build's own poms: the root's and its ``<modules>``', recursively — not the test fixtures and plugin
    integration-test projects a source release carries (maven-filtering 3.4.0's ``src/test/resources`` pom names a
    SNAPSHOT; maven-resources-plugin 3.3.1's ``src/it/*`` projects have test classes of their own). The root's
    first, then in the order the poms name them."""
    found = [src / POM] if (src / POM).is_file() else []
    for pom in found:  # grows as it goes: each module's own modules after it
        found.extend(p for p in _module_poms(src, pom) if p not in found)
    return found


def module_dirs(src: Path) -> list[Path]:
    """The directories of the build's own modules, ``src`` itself first (also without a pom), each once (a module
    may name another pom file in its parent's directory)."""
    return list(dict.fromkeys([src, *(p.parent for p in poms(src))]))


def _module_poms(src: Path, pom: Path) -> list[Path]:
    """The poms of the modules ``pom`` names, in its ``<profiles>`` too; a module whose pom is missing, outside
    ``src`` or unparseable is skipped (Maven would fail on it, and says why)."""
    try:
        project = ET.parse(pom).getroot()
    except (ET.ParseError, OSError):
        return []
    names = [m.text or "" for m in project.iterfind("{*}modules/{*}module")]
    names += [m.text or "" for m in project.iterfind("{*}profiles/{*}profile/{*}modules/{*}module")]
    found = []
    for name in filter(None, (n.strip() for n in names)):
        path = (pom.parent / name).resolve()
        path = path if path.suffix == ".xml" else path / POM  # a module may name its pom file itself
        if path.is_file() and path.is_relative_to(src.resolve()):
            found.append(src / path.relative_to(src.resolve()))
    return found


def build_digest(src: Path) -> str:
    """A digest of what decides a build's dependencies: every pom, Maven's config and the wrapper's."""
    digest = hashlib.sha256()
    for path in [*poms(src), src / ".mvn/maven.config", src / WRAPPER_PROPERTIES]:
        if path.is_file():
            digest.update(path.relative_to(src).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def configures_jacoco(src: Path) -> bool:
    """Whether the repository runs JaCoCo's agent itself (then a second agent must not be added)."""
    return any(b"jacoco-maven-plugin" in p.read_bytes() for p in poms(src))


_COMMENT = re.compile(rb"<!--.*?-->", re.S)
_ARG_LINE_TAG = re.compile(rb"<argLine\s*(/?)>")
SUREFIRE = "maven-surefire-plugin"
# Surefire's late replacement, which JaCoCo's documentation asks of a pom that sets its own argLine: the
# property prepare-agent sets (or, skipped, defines empty) at the front of the pom's own arguments.
LATE_ARG_LINE = b"@{argLine}"


def keep_agent(src: Path) -> list[Path]:
    """Make every Surefire ``<argLine>`` of the build's poms that leaves out the ``argLine`` property (commons-io
    2.6's ``-Xmx25M``) start with ``@{argLine}``, as JaCoCo's documentation asks, so that its agent runs in the
    test JVM; the poms changed. A pom this cannot read as XML is left alone (Maven says what is wrong with it)."""
    return [pom for pom in poms(src) if _keep_agent_in(pom)]


def _keep_agent_in(pom: Path) -> bool:
    text = pom.read_bytes()
    try:
        project = ET.fromstring(text)
    except ET.ParseError:
        return False
    ours = {id(line) for line in _surefire_arg_lines(project)}
    # the parsed elements and the tags outside comments come in the same (document) order
    comments = [m.span() for m in _COMMENT.finditer(text)]
    tags = [m for m in _ARG_LINE_TAG.finditer(text) if not any(a <= m.start() < b for a, b in comments)]
    elements = list(project.iterfind(".//{*}argLine"))
    if len(tags) != len(elements):
        return False
    edits = [tag for tag, element in zip(tags, elements, strict=True) if id(element) in ours]
    for tag in reversed(edits):
        late = b"<argLine>" + LATE_ARG_LINE + (b"</argLine>" if tag[1] else b" ")
        text = text[: tag.start()] + late + text[tag.end() :]
    if edits:
        pom.write_bytes(text)
    return bool(edits)


def _surefire_arg_lines(project: ET.Element) -> list[ET.Element]:
    """Surefire's ``<argLine>`` configurations (of the plugin, an execution, a profile, plugin management) that
    leave out the ``argLine`` property."""
    plugins = [p for p in project.iterfind(".//{*}plugin") if (p.findtext("{*}artifactId") or "").strip() == SUREFIRE]
    lines = [line for plugin in plugins for line in plugin.iterfind(".//{*}argLine")]
    return [line for line in lines if "argLine}" not in (line.text or "")]


def failed_goal(output: str) -> str:
    """Maven's own summary of why a run failed (``Failed to execute goal …``), or else its first ``[ERROR]``
    line that says something (not its help links and advice)."""
    said = []
    lines = output.splitlines()
    for at, line in enumerate(lines):
        line = line.rstrip()
        if match := _FAILED_GOAL.match(line):
            return match[1] + _listed_after(match[1], lines[at + 1 :])
        text = line.removeprefix("[ERROR]").strip()
        if line.startswith("[ERROR] ") and text and not text.startswith(_ADVICE):
            said.append(text.removesuffix(" -> [Help 1]"))
    return said[0] if said else ""


def _listed_after(summary: str, rest: list[str]) -> str:
    """What a summary ending in ':' lists on the ``[ERROR]`` lines after it, its first three items (spotless' "The
    following files had format violations:" names the files, less indented than their diffs)."""
    if summary.endswith(": Missing:"):
        return _first_missing(rest)
    if not summary.endswith(":"):
        return ""
    block = []
    for line in rest:
        text = line.removeprefix("[ERROR] ").rstrip()
        if not line.startswith("[ERROR] ") or not text.startswith(" ") or not text.strip():
            break  # the list is indented; Maven's advice after it is not
        block.append(text)
    if not block:
        return ""
    depth = len(block[0]) - len(block[0].lstrip())
    # not spotless' "... (762 more lines that didn't fit)", which cuts a long diff short at the files' depth
    items = [t.strip() for t in block if len(t) - len(t.lstrip()) == depth and not t.strip().startswith("... (")]
    return " " + ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")


def _first_missing(rest: list[str]) -> str:
    """The first artifact Maven 3.8 lists after "Missing:" (its list starts after a ``----------`` line)."""
    for line in rest:
        if not line.startswith("[ERROR]"):
            break
        if match := _MISSING_ITEM.match(line.rstrip()):
            return " " + match[1]
    return ""


_GOAL_EXECUTION = re.compile(r"Failed to execute goal (\S+ \([^)]*\) on project [^:\s]+)")


def same_goal(summary: str, other: str) -> bool:
    """Whether two of Maven's summaries (``failed_goal``) name the same goal execution of the same project."""
    one, two = (_GOAL_EXECUTION.search(text) for text in (summary, other))
    return one is not None and two is not None and one[1] == two[1]


def offline_miss(output: str) -> bool:
    """Whether an offline run failed for want of something the dependency phase did not fetch."""
    return any(_OFFLINE_MISS.search(line) for line in output.splitlines() if line.startswith("[ERROR]"))


# mendflow's own JaCoCo report (the ``report`` goal it names on the command line): not the project's build.
_OWN_REPORT = re.compile(
    r"^\[ERROR\] Failed to execute goal org\.jacoco:jacoco-maven-plugin:[^:\s]+:report \(default-cli\)", re.M
)


def coverage_report_failed(output: str) -> bool:
    """Whether the run failed in the JaCoCo report mendflow adds after ``test`` (e.g. a multi-release jar's
    ``META-INF/versions`` classes, which JaCoCo refuses as duplicates), once the project's own goals are done."""
    return bool(_OWN_REPORT.search(output))


def fork_crashed(output: str) -> bool:
    return bool(_CRASH.search(output))


def modules_with(src: Path, relative: str) -> list[tuple[PurePosixPath, Path]]:
    """``(module, file)`` for every module (its directory relative to ``src``, ``.`` at the root) whose
    ``relative`` output exists, sorted by module."""
    found = []
    for path in sorted(src.rglob(relative)):
        module_dir = path.parents[len(PurePosixPath(relative).parts) - 1]
        module = module_dir.relative_to(src)
        if "target" in module.parts:
            continue
        found.append((PurePosixPath(module.as_posix()), path))
    return found


def merged_jacoco(reports: list[tuple[PurePosixPath, Path]]) -> tuple[str, list[str]]:
    """One JaCoCo XML of every module's report, and the source directories its files are under."""
    merged = ET.Element("report", name="mendflow")
    source_dirs = []
    for module, report in reports:
        tree = ET.fromstring(report.read_bytes())
        merged.extend(tree.iter("package"))
        source_dirs.append((module / "src/main/java").as_posix())
    return ET.tostring(merged, encoding="unicode"), source_dirs
