"""gofmt's verdicts kept by content digest: which files a job leaves to gofmt, and what it keeps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mendflow_go import fmtcache

FORMATTED, UNFORMATTED = "package p\n", "package  p\n"


def _tree(root: Path, **files: str) -> list[Path]:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return sorted(root / name for name in files)


def _kept(tmp_path: Path, tool: str = "gofmt-a", **verdicts: bool) -> fmtcache.Verdicts:
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / fmtcache.FILE).write_text(json.dumps({"tool": "gofmt-a", "formatted": verdicts}))
    return fmtcache.Verdicts.load(tmp_path / "cache", tool)


def test_a_file_judged_before_is_not_copied_and_an_unformatted_one_is_named(tmp_path: Path) -> None:
    src = tmp_path / "src"
    files = _tree(src, **{"a.go": FORMATTED, "b.go": UNFORMATTED, "sub/c.go": "package c\n"})
    verdicts = _kept(tmp_path, **{fmtcache.digest(files[0]): True, fmtcache.digest(files[1]): False})
    unformatted, unseen = verdicts.sort(src, src, files, tmp_path / "copy")
    assert (unformatted, list(unseen.files)) == (["b.go"], ["sub/c.go"])
    assert [p.relative_to(tmp_path / "copy").as_posix() for p in (tmp_path / "copy").rglob("*.go")] == ["sub/c.go"]


def test_another_gofmts_verdicts_are_not_used(tmp_path: Path) -> None:
    files = _tree(tmp_path / "src", **{"a.go": FORMATTED})
    verdicts = _kept(tmp_path, "gofmt-b", **{fmtcache.digest(files[0]): True})
    assert verdicts.kept == {}


def test_an_unreadable_verdicts_file_is_no_verdict(tmp_path: Path) -> None:
    (tmp_path / fmtcache.FILE).write_text('{"tool": "gofmt-a", "formatted": {"x": "yes"}}')
    assert fmtcache.Verdicts.load(tmp_path, "gofmt-a").kept == {}


def test_a_module_below_the_root_is_copied_at_its_own_path(tmp_path: Path) -> None:
    src = tmp_path / "src"
    files = _tree(src, **{"mod/a.go": FORMATTED})
    _, unseen = fmtcache.Verdicts.load(tmp_path, "gofmt-a").sort(src, src / "mod", files, tmp_path / "copy")
    assert list(unseen.files) == ["a.go"] and (tmp_path / "copy" / "mod" / "a.go").read_text() == FORMATTED


def test_a_symbolic_link_is_copied_as_one_and_no_verdict_of_it_is_kept(tmp_path: Path) -> None:
    src = tmp_path / "src"
    target = _tree(tmp_path / "outside", **{"secret.go": FORMATTED})[0]
    src.mkdir()
    (src / "link.go").symlink_to(target)
    verdicts = fmtcache.Verdicts.load(tmp_path, "gofmt-a")
    _, unseen = verdicts.sort(src, src, [src / "link.go"], tmp_path / "copy")
    verdicts.judge(unseen, ["link.go"], set())
    assert (tmp_path / "copy" / "link.go").is_symlink() and verdicts.judged == {}


def test_the_saved_verdicts_are_this_jobs_only(tmp_path: Path) -> None:
    src = tmp_path / "src"
    files = _tree(src, **{"a.go": FORMATTED, "b.go": UNFORMATTED})
    verdicts = _kept(tmp_path, **{fmtcache.digest(files[0]): True, "gone": True})
    _, unseen = verdicts.sort(src, src, files, tmp_path / "copy")
    verdicts.judge(unseen, ["b.go"], {"b.go"})
    verdicts.save()
    again = fmtcache.Verdicts.load(tmp_path / "cache", "gofmt-a")
    assert again.kept == {fmtcache.digest(files[0]): True, fmtcache.digest(files[1]): False}


def test_the_tool_is_named_by_its_real_file(tmp_path: Path) -> None:
    gofmt = shutil.which("gofmt") or shutil.which("python3")
    assert gofmt is not None
    (tmp_path / "gofmt").symlink_to(gofmt)
    assert fmtcache.tool_identity(str(tmp_path / "gofmt")) == fmtcache.tool_identity(gofmt)
    assert fmtcache.tool_identity(None) is None
