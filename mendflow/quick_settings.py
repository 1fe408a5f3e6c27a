"""The few settings a code-index query reads, taken from the environment without building ``Settings``.

``mendflow search`` and ``mendflow grep`` must answer in a fraction of a second, and importing
pydantic-settings with the whole ``Settings`` tree costs ~0.1 s of that. A query on the embedded store
without embeddings needs only the state directory; any other shape of the index settings (Weaviate,
embeddings, a JSON ``MENDFLOW_INDEX``) returns None so the caller reads the full ``get_settings()``, which
stays the one authority: the names and defaults here mirror ``mendflow/settings.py``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # mypy reads it as typing's; importing typing costs `mendflow grep` ~2 ms

if TYPE_CHECKING:
    from pathlib import Path

PREFIX = "MENDFLOW_"
# The index settings a query on the default backend may leave at these values (case-insensitive, like Settings).
DEFAULTS = {"MENDFLOW_INDEX__BACKEND": "embedded", "MENDFLOW_INDEX__EMBEDDINGS": "none"}


def default_state_dir() -> Path:
    """``Settings.state_dir``'s default, here so the query path needs no pydantic-settings to know it."""
    from pathlib import Path

    return Path(_default_state_path())


def _default_state_path() -> str:
    return os.path.join(os.path.expanduser("~"), ".local", "state", "mendflow")


def query_state_dir(environ: dict[str, str] | None = None) -> Path | None:
    """The state directory when a query needs nothing else from the settings, else None."""
    from pathlib import Path

    found = query_state_path(environ)
    return None if found is None else Path(found)


def query_state_path(environ: dict[str, str] | None = None) -> str | None:
    """``query_state_dir`` as a string: ``mendflow grep``'s fast path starts without pathlib (~2.5 ms)."""
    source = os.environ if environ is None else environ
    env = {k.upper(): v for k, v in source.items() if k.upper().startswith(PREFIX)}
    if "MENDFLOW_INDEX" in env:
        return None  # nested settings given as one JSON value: let pydantic-settings parse them
    for name, default in DEFAULTS.items():
        if env.get(name, default).strip().lower() != default:
            return None
    return env.get("MENDFLOW_STATE_DIR") or _default_state_path()
