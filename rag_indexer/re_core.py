"""re's own parser and compiler, for ``mendflow grep --regex``, without ``import re``.

Why: ``import re`` runs re/__init__.py, whose ``RegexFlag`` enum and pattern cache import enum, functools and
collections: ~4 ms of a command that should answer within 1.2 x rg (~15 ms on SymPy). The parser and the
compiler use none of them. When re is imported already (any long-lived process), its modules are used as they
are; else re's own files are loaded once more, as the private package ``_re_core``, so re/__init__.py never
runs. A pattern is the same ``re.Pattern`` either way: ``_sre.compile`` makes both.

3.11+ layout (re._parser, re._compiler, re._constants); this Python's ``requires-python`` is ">=3.11".
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:
    from typing import Any

_PRIVATE = "_re_core"


def _private_package() -> str | None:
    """The private package's name, its path re's own directory; None when re is imported already or its
    directory cannot be found."""
    if "re" in sys.modules:
        return None
    # importlib.machinery's PathFinder, from the frozen bootstrap every CPython has loaded: importing importlib
    # itself costs ~0.3 ms (it imports warnings).
    bootstrap = sys.modules.get("_frozen_importlib_external")
    spec = bootstrap.PathFinder.find_spec("re") if bootstrap else None
    if spec is None or not spec.submodule_search_locations:
        return None
    package = type(sys)(_PRIVATE)
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules[_PRIVATE] = package
    return _PRIVATE


def _modules() -> tuple[Any, Any, Any]:
    package = _private_package()
    if package is not None:
        try:
            return _loaded(package)
        except ImportError:  # another layout than 3.11's: drop the private copies, re's own import always works
            for name in [n for n in sys.modules if n.partition(".")[0] == _PRIVATE]:
                del sys.modules[name]
    import re  # noqa: F401

    return _loaded("re")


def _loaded(package: str) -> tuple[Any, Any, Any]:
    __import__(f"{package}._compiler")  # imports _parser, _constants and _casefix relative to the package
    return tuple(sys.modules[f"{package}.{name}"] for name in ("_parser", "_compiler", "_constants"))  # type: ignore[return-value]


parser, compiler, constants = _modules()
error: type[Exception] = constants.error  # re.error when re's own modules are used
IGNORECASE: int = constants.SRE_FLAG_IGNORECASE
MULTILINE: int = constants.SRE_FLAG_MULTILINE
DOTALL: int = constants.SRE_FLAG_DOTALL


def compile(pattern: Any, flags: int = 0) -> Any:  # re.compile's name and signature
    """``re.compile(pattern, flags)`` without re's cache (a grep compiles a pattern once)."""
    return compiler.compile(pattern, flags)
