"""The generator's context: the existing test file shown as the repository's style comes from the code index."""

from __future__ import annotations

from pathlib import Path

import pygit2

from mendflow.contracts import CoverageTarget, TestSpec
from mendflow.testgen.context import gather
from rag_indexer.api import open_index
from rag_indexer.config import IndexerConfig
from tests.fixtures.repos import RepoFactory

MEASUREMENTS = "\n\n".join(
    f"def test_{n}() -> None:\n    assert polygon_area([(0, 0), ({n}, 0), (0, {n})]) == {n * n / 2}" for n in (1, 2, 3)
)
FILES = {
    "geometry/__init__.py": "",
    "geometry/shapes.py": "def polygon_area(points):\n    return 0.5 * abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1)"
    " in zip(points, points[1:] + points[:1])))\n",
    "geometry/cli.py": "import argparse\n\n\ndef main():\n    argparse.ArgumentParser(prog='shapes').parse_args()\n",
    # named after the module, but it tests the command line
    "tests/test_shapes_cli.py": "from geometry.cli import main\n\n\ndef test_main() -> None:\n    main()\n",
    # named after nothing, but it is where polygon_area is tested
    "tests/test_measurements.py": "from geometry.shapes import polygon_area\n\n\n" + MEASUREMENTS + "\n",
}


def _spec(repo: Path) -> TestSpec:
    head = str(pygit2.Repository(str(repo)).head.target)
    target = CoverageTarget(path="geometry/shapes.py", symbol="polygon_area", start_line=1, end_line=2, line_pct=0)
    return TestSpec(id="s", parent_commit_sha=head, targets=[target])


def test_the_style_sample_is_the_test_file_the_index_ranks_first_for_the_target(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    repo = make_repo(FILES, name="geometry")
    with open_index(config=IndexerConfig(index_dir=tmp_path / "index")) as index:
        index.index(repo)
        context = gather(pygit2.Repository(str(repo)), _spec(repo), "tests", index)
    assert context.style_sample.startswith("# tests/test_measurements.py\n")


def test_without_an_index_the_sample_is_chosen_by_file_name(make_repo: RepoFactory) -> None:
    repo = make_repo(FILES, name="geometry")
    context = gather(pygit2.Repository(str(repo)), _spec(repo), "tests", None)
    assert context.style_sample.startswith("# tests/test_shapes_cli.py\n")
