"""Benchmark: B1 of real projects in each language mendflow builds, as their maintainers publish them.

For each subject — the shipped example and real modules from the language's registry — one run measures, side
by side: the B1 status mendflow gives (target: PASSED where the project's own test command passes), its line
coverage, and mendflow's build job (the local launcher's sandboxed job: unpack, dependency phase, build, lint,
tests, coverage) ÷ the project's own test-with-coverage command run directly, both warm (target ≤ 1.2).

    uv run python bench/languages.py [--repeat 3] [--json]

Languages so far: Go (modules from the Go module proxy, unpacked as ``go mod download`` serves them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.repos import commit_files  # noqa: E402

# (subject, module@version or None for the example); the real modules have tests and a go.sum as published.
GO_SUBJECTS = [
    ("go-ratelimit (example)", None),
    ("github.com/google/uuid", "github.com/google/uuid@v1.6.0"),
    ("github.com/cespare/xxhash/v2", "github.com/cespare/xxhash/v2@v2.3.0"),
    ("github.com/google/go-cmp", "github.com/google/go-cmp@v0.6.0"),
    # With dependencies from the module proxy; two of its tests fail as published here (TestDirExists and
    # TestNoDirExists), and its suite package takes half a minute.
    ("github.com/stretchr/testify", "github.com/stretchr/testify@v1.9.0"),
]


@dataclass
class Row:
    language: str
    subject: str
    own_status: str
    b1_status: str
    line_pct: float | None
    own_sec: float
    mendflow_sec: float
    cold_mendflow_sec: float
    files: int

    @property
    def ratio(self) -> float:
        return self.mendflow_sec / self.own_sec if self.own_sec else float("nan")


def go_env(work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GOMODCACHE": str(work / "own-mod"),
        "GOCACHE": str(work / "own-build"),
        "GOFLAGS": "-modcacherw",
        "GOTOOLCHAIN": "local",
    }


def go_subject(name: str, module: str | None, work: Path) -> Path:
    """A git repository of the module's files as the module proxy serves them."""
    target = work / "repos" / name.replace("/", "_").split(" ")[0]
    if module is None:
        shutil.copytree(ROOT / "examples" / "go-ratelimit", target)
    else:
        out = subprocess.run(
            ["go", "mod", "download", "-json", module], env=go_env(work), capture_output=True, text=True, check=True
        )
        shutil.copytree(json.loads(out.stdout)["Dir"], target)
        for path in target.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    files: dict[str, str | bytes | None] = {
        str(p.relative_to(target)): p.read_bytes() for p in sorted(target.rglob("*")) if p.is_file()
    }
    shutil.rmtree(target)
    target.mkdir(parents=True)
    import pygit2

    pygit2.init_repository(str(target), initial_head="main")
    commit_files(target, files, "as published")
    return target


def own_go(repo: Path, work: Path) -> tuple[float, str]:
    """The project's tests with coverage as its CI runs them, directly: the command mendflow runs, with
    ``-count=1`` so Go's test result cache (which a new commit's CI does not hit) answers nothing."""
    argv = ["go", "test", "-short", "-count=1", "-covermode=atomic", f"-coverprofile={work / 'own.out'}", "./..."]
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=repo, env=go_env(work), capture_output=True, check=False)
    return time.perf_counter() - start, "PASSED" if proc.returncode == 0 else "FAILED"


def mendflow_b1(repo: Path) -> tuple[float, str, float | None]:
    """mendflow's B1 build job of ``repo`` (resolve, the sandboxed job, the report collected and published)."""
    from mendflow import source as sources
    from mendflow.settings import get_settings
    from mendflow.store import open_store
    from tasks.ci import run_build_job

    settings = get_settings()
    store = open_store(settings.resolved_store_url(), settings)
    source = sources.resolve(str(repo), None, "main", store, settings)
    store.delete_prefix(source.artefacts.builds(source.commit_sha, "B1"))  # every repeat builds again
    start = time.perf_counter()
    report = run_build_job(source, "B1", 1, store, settings)
    wall = time.perf_counter() - start
    return wall, report.status.value, report.coverage.line_pct if report.coverage else None


def measure(language: str, name: str, repo: Path, work: Path, repeat: int) -> Row:
    cold, status, line_pct = mendflow_b1(repo)
    own_status = own_go(repo, work)[1]  # warms the project's own caches
    own, ours = [], []
    for _ in range(repeat):  # interleaved, so both see the same machine
        own.append(own_go(repo, work)[0])
        wall, status, line_pct = mendflow_b1(repo)
        ours.append(wall)
    files = sum(1 for p in repo.rglob("*.go") if ".git" not in p.parts)
    return Row(
        language, name, own_status, status, line_pct, statistics.median(own), statistics.median(ours), cold, files
    )


def table(rows: list[Row]) -> str:
    head = "| language | subject | .go files | own test | B1 | line % | own s | mendflow s | ratio (warm) | cold s |"
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        pct = f"{r.line_pct:.1f}" if r.line_pct is not None else "—"
        lines.append(
            f"| {r.language} | {r.subject} | {r.files} | {r.own_status} | {r.b1_status} | {pct} | {r.own_sec:.2f} "
            f"| {r.mendflow_sec:.2f} | {r.ratio:.2f} | {r.cold_mendflow_sec:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mendflow-languages-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # jobs drop to their own uids: the launcher's base must be reachable
        os.environ["MENDFLOW_STATE_DIR"] = str(work / "state")
        os.environ["MENDFLOW_SANDBOX__LOCAL_BASE_DIR"] = str(work / "launcher")
        rows = [measure("go", name, go_subject(name, module, work), work, args.repeat) for name, module in GO_SUBJECTS]
    if args.json:
        print(json.dumps([{**asdict(r), "ratio": r.ratio} for r in rows], indent=2))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
