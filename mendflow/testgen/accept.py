"""What the trusted side accepts back from the test-generation job, decided before the job runs.

The job runs the repository's own code (its conftest, its tests), so its ``result.json`` may say anything.
Only files at the exact paths mendflow asked the job to write, under the tests directory and within the size
cap, are committed; a kept test in any other file is dropped. B2 then re-checks what was committed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from mendflow.contracts import DroppedTest, DropReason, KeptTest

MAX_TEST_FILE_BYTES = 256 * 1024


@dataclass
class Accepted:
    files: dict[str, str] = field(default_factory=dict)
    kept: list[KeptTest] = field(default_factory=list)
    refused: list[DroppedTest] = field(default_factory=list)


def accept(
    files: dict[str, str], kept: list[KeptTest], asked: set[str], tests_dir: str, max_bytes: int = MAX_TEST_FILE_BYTES
) -> Accepted:
    """The files and kept tests mendflow will commit; everything else is refused with the reason."""
    result = Accepted()
    for path, text in sorted(files.items()):
        problem = _problem(path, text, asked, tests_dir, max_bytes)
        if problem:
            reason = DropReason.OVERSIZE if problem.startswith("larger") else DropReason.NOT_ASKED_FOR
            result.refused.append(DroppedTest(node_id=path, reason=reason, detail=problem))
        else:
            result.files[path] = text
    for test in kept:
        if test.node_id.split("::", 1)[0] in result.files:
            result.kept.append(test)
        else:
            detail = "the job reported it kept in a file mendflow did not accept"
            result.refused.append(DroppedTest(node_id=test.node_id, reason=DropReason.NOT_ASKED_FOR, detail=detail))
    return result


def _problem(path: str, text: str, asked: set[str], tests_dir: str, max_bytes: int) -> str:
    parts = PurePosixPath(path).parts
    if path not in asked:
        return f"{path!r} is not a file mendflow asked the job to write"
    if (
        PurePosixPath(path).is_absolute()
        or ".." in parts
        or parts[: len(PurePosixPath(tests_dir).parts)] != PurePosixPath(tests_dir).parts
    ):
        return f"{path!r} is not under {tests_dir}/"
    if len(text.encode("utf-8", errors="replace")) > max_bytes:
        return f"larger than {max_bytes} bytes"
    return ""
