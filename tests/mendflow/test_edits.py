"""The edit layer (``mendflow/edits.py``): seed 004's update, patch and rewrite payloads."""

from __future__ import annotations

import pytest

from mendflow.contracts import HealEdit, HealMethod, UpdateEdit
from mendflow.edits import apply_edit, diff_size, next_method, numbered, unified_diff
from mendflow.errors import HealError

PATH = "tests/test_calc.py"
BEFORE = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
AFTER = "from calc import plus\n\n\ndef test_add():\n    assert plus(2, 2) == 4\n"


def update(old: str, new: str, path: str = PATH) -> HealEdit:
    return HealEdit(file_to_patch=path, update=UpdateEdit(old_str=old, new_str=new))


def patch(diff: str) -> HealEdit:
    return HealEdit(file_to_patch=PATH, patch=diff)


# -- update -------------------------------------------------------------------------------------------------


def test_update_replaces_a_unique_old_str() -> None:
    assert apply_edit(update("from calc import add", "from calc import plus"), BEFORE).startswith(
        "from calc import plus\n"
    )


def test_update_whose_old_str_is_absent_is_refused_with_the_count() -> None:
    with pytest.raises(HealError, match="old_str does not occur"):
        apply_edit(update("import subtract", "import minus"), BEFORE)


def test_update_whose_old_str_occurs_three_times_is_refused_with_the_count() -> None:
    text = "x = 1\nx = 1\nx = 1\n"
    with pytest.raises(HealError, match="old_str occurs 3 times"):
        apply_edit(update("x = 1", "x = 2"), text)


def test_an_edit_that_changes_nothing_is_refused() -> None:
    with pytest.raises(HealError, match="changes nothing"):
        apply_edit(update("import add", "import add"), BEFORE)


# -- patch --------------------------------------------------------------------------------------------------


def test_patch_applies_cleanly() -> None:
    diff = (
        "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -1,5 +1,5 @@\n"
        "-from calc import add\n+from calc import plus\n \n \n def test_add():\n"
        "-    assert add(2, 2) == 4\n+    assert plus(2, 2) == 4\n"
    )
    assert apply_edit(patch(diff), BEFORE) == AFTER


def test_patch_from_unified_diff_round_trips_without_final_newline() -> None:
    before, after = BEFORE.rstrip("\n"), AFTER.rstrip("\n")
    assert apply_edit(patch(unified_diff(PATH, before, after)), before) == after


def test_patch_with_shifted_line_numbers_applies_at_its_exact_context() -> None:
    shifted = "# a comment the diff does not know about\n" + BEFORE
    assert (
        apply_edit(patch(unified_diff(PATH, BEFORE, AFTER)), shifted)
        == "# a comment the diff does not know about\n" + AFTER
    )


def test_patch_whose_context_does_not_match_is_refused_naming_the_hunk() -> None:
    diff = unified_diff(PATH, BEFORE, AFTER).replace(" def test_add():", " def test_addition():")
    with pytest.raises(HealError, match=r"hunk 1 \(@@ -1,5 \+1,5 @@\) does not apply"):
        apply_edit(patch(diff), BEFORE)


def test_patch_with_wrong_line_counts_is_refused() -> None:
    diff = unified_diff(PATH, BEFORE, AFTER).replace("@@ -1,5 +1,5 @@", "@@ -1,9 +1,9 @@")
    with pytest.raises(HealError, match="not a valid unified diff"):
        apply_edit(patch(diff), BEFORE)


def test_patch_of_another_file_is_refused() -> None:
    diff = unified_diff("calc.py", BEFORE, AFTER)
    with pytest.raises(HealError, match=r"changes calc\.py, not tests/test_calc\.py"):
        apply_edit(patch(diff), BEFORE)


# -- rewrite ------------------------------------------------------------------------------------------------


def test_rewrite_replaces_the_whole_file() -> None:
    assert apply_edit(HealEdit(file_to_patch=PATH, new_content=AFTER), BEFORE) == AFTER


# -- diffs --------------------------------------------------------------------------------------------------


def test_unified_diff_uses_git_paths_and_counts_changed_lines() -> None:
    diff = unified_diff(PATH, BEFORE, AFTER)
    assert diff.startswith(f"--- a/{PATH}\n+++ b/{PATH}\n")
    assert diff_size(diff) == 2  # two lines replaced: each counts once


def test_a_line_split_in_two_is_two_changed_lines() -> None:
    after = BEFORE.replace("    assert add(2, 2) == 4\n", "    total = add(2, 2)\n    assert total == 4\n")
    assert diff_size(unified_diff(PATH, BEFORE, after)) == 2


def test_separate_changes_in_one_hunk_count_apart() -> None:
    after = BEFORE.replace("from calc import add", "from calc import add  # x").replace("== 4", "== 4  # y")
    assert diff_size(unified_diff(PATH, BEFORE, after)) == 2


def test_a_diff_unidiff_cannot_read_is_counted_line_by_line() -> None:
    assert diff_size("-a\n+b\n c\n+d\n") == 2


def test_the_escalation_goes_update_patch_rewrite_then_stops() -> None:
    assert [next_method(m) for m in HealMethod] == [HealMethod.PATCH, HealMethod.REWRITE, None]


def test_a_numbered_file_shows_each_line_with_its_number_inside_its_path_frame() -> None:
    assert numbered(PATH, "a\nb\n") == f"=== {PATH} ===\n   1 | a\n   2 | b\n=== end of {PATH} ==="
