"""Secrets scan of generated files with detect-secrets, before anything is committed."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from detect_secrets import SecretsCollection
from detect_secrets.settings import default_settings


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    kind: str

    def __str__(self) -> str:  # never the secret itself
        return f"{self.path}:{self.line}: {self.kind}"


def scan(files: dict[str, str]) -> list[Finding]:
    """Findings of detect-secrets' default plugins in ``files`` (path → text)."""
    if not files:
        return []
    with tempfile.TemporaryDirectory(prefix="mendflow-secrets-") as tmp:
        root = Path(tmp)
        names = {}
        for i, (path, text) in enumerate(sorted(files.items())):
            local = root / f"{i}_{Path(path).name}"
            local.write_text(text, encoding="utf-8")
            names[str(local)] = path
        collection = SecretsCollection()
        with default_settings():
            for filename in names:
                collection.scan_file(filename)
        found = [
            Finding(names[filename], secret.line_number, secret.type)
            for filename, secrets in collection.data.items()
            for secret in secrets
        ]
    return sorted(found, key=lambda f: (f.path, f.line))
