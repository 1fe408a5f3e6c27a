"""``mendflow grep`` from a grep pack (``rag_indexer/store/grep_cache.py``): the whole command in about rg's time.

rg answers on SymPy in ~14 ms; a Python process that imports ``re`` has used ~14 ms before it reads a byte.
So this path imports nothing it can do without (no argparse, pathlib, typing, sqlite3, subprocess) and
answers only the plain forms it can answer exactly: a pattern with ``-i``, ``--regex``, ``--repo``, ``--ref``
and a ``--path`` prefix, on the embedded index, for a repository and ref a previous grep has located.
Anything else (help, an unknown option, a glob, a bad regex, no pack yet) returns None, and
``cli/query.py``, the authority on arguments, errors and the index, answers and records the locator.

The installed ``mendflow`` command (``native/``, in Rust) answers these same forms before Python starts, with
the same rules read the same way: the argument forms, ``quick_settings.query_state_path``, ``locator_key``,
``grep_cache``'s locator and refs token, and the pack's layout. A change to any of them is a change to both
(``tests/native/test_launcher.py`` holds their answers equal).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs this path ~2 ms

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rag_indexer.store import grep_pack

_FLAGS = {"-i": "ignore_case", "--ignore-case": "ignore_case", "--regex": "regex"}
_VALUES = ("--repo", "--ref", "--path")
# Git reads these besides the work tree's own config: a change in any may change the repository's identity.
_GIT_CONFIGS = ("~/.gitconfig", "~/.config/git/config", "/etc/gitconfig")
# Variables that move where git looks for the repository or its config (as do the GIT_CONFIG* ones).
_GIT_PLACES = {"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES", "XDG_CONFIG_HOME"}


class Args:
    __slots__ = ("ignore_case", "path", "pattern", "ref", "regex", "repo")

    def __init__(self) -> None:
        self.pattern: str | None = None
        self.ignore_case = self.regex = False
        self.repo: str | None = None
        self.ref: str | None = None
        self.path: str | None = None


def answer(args: list[str]) -> int | None:
    """The exit code after printing the matching lines, or None when the full command must answer."""
    from mendflow.quick_settings import query_state_path

    given = plain_args(args)
    state = query_state_path()
    if given is None or state is None or (given.path and any(c in given.path for c in "*?[")):
        return None
    key = locator_key(given.repo, given.ref)
    if key is None:
        return None
    from rag_indexer.store import grep_cache, grep_pack

    index_dir = os.path.join(state, "index")
    tree = grep_cache.recall(index_dir, key)
    pack = grep_pack.Pack.open(grep_cache.pack_path(index_dir, tree)) if tree else None
    if pack is None:
        return None
    try:
        return _answer_from(pack, given)
    finally:
        pack.close()


def _answer_from(pack: grep_pack.Pack, given: Args) -> int | None:
    from mendflow.errors import InputError
    from rag_indexer.grep import compile_query

    try:
        query = compile_query(given.pattern or "", given.regex, given.ignore_case)
    except InputError:
        return None  # cli/query.py says what is wrong with it
    return 0 if write_lines(pack.lines(query, given.path)) else 1


def plain_args(args: list[str]) -> Args | None:
    """The arguments when they take only the plain forms, else None (argparse then parses them)."""
    given = Args()
    rest = iter(args)
    for arg in rest:
        name, _, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if arg == "--":
            positional = list(rest)
            if len(positional) != 1 or given.pattern is not None:
                return None
            given.pattern = positional[0]
        elif arg in _FLAGS:
            setattr(given, _FLAGS[arg], True)
        elif name in _VALUES:
            value = value if "=" in arg else next(rest, "")
            if not value:
                return None
            setattr(given, name[2:], value)
        elif arg.startswith("-") or given.pattern is not None:
            return None
        else:
            given.pattern = arg
    return given if given.pattern else None


def locator_key(repo: str | None, ref: str | None) -> str | None:
    """What a grep asked for, as the locator's key: a work tree (with its git configs' times) or an identity.

    None when git would read more than this can see (GIT_* variables, a linked work tree's ``.git`` file).
    """
    where = os.getcwd() if repo is None else repo
    if repo is not None and not os.path.exists(repo):
        return f"id\0{repo}\0{ref or ''}"
    if any(name in _GIT_PLACES or name.startswith("GIT_CONFIG") for name in os.environ):
        return None
    top = _work_tree(os.path.abspath(where))
    if top is None:
        return None
    configs = (os.path.join(top, ".git", "config"), *(os.path.expanduser(p) for p in _GIT_CONFIGS))
    return f"tree\0{top}\0{ref or ''}\0" + ",".join(str(_mtime(p)) for p in configs)


def _work_tree(path: str) -> str | None:
    """The work tree holding ``path`` when its ``.git`` is a directory (git's own walk up, without git)."""
    while True:
        if os.path.isdir(os.path.join(path, ".git")):
            return path
        if os.path.exists(os.path.join(path, ".git")):
            return None  # a linked work tree or submodule: its config is elsewhere
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def write_lines(lines: Iterable[tuple[str, int, str]]) -> int:
    """Write ``path:line:text`` rows in blocks (print per line costs more than the search); count them."""
    out: list[str] = []
    count = 0
    try:
        for path, number, text in lines:
            out.append(f"{path}:{number}:{text}\n")
            count += 1
            if len(out) >= 4096:
                sys.stdout.write("".join(out))
                out.clear()
        sys.stdout.write("".join(out))
        sys.stdout.flush()
    except BrokenPipeError:  # `mendflow grep ... | head`: the reader has what it wanted
        # Python's own recipe: point stdout at /dev/null so the flush at exit raises nothing either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return count
