"""The toolchain a repository pins for rustup (``rust-toolchain.toml``, or the older ``rust-toolchain``), beside the
one the image has. The image runs its own toolchain, without rustup's proxies, so no pin is ever downloaded; a
pin the image does not meet is said, with the release that built and tested the crate instead (a crate pinned to
a newer release or to nightly can fail for that alone, and the report should say why).
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

# rustup reads the first of these that exists in the repository's root.
PIN_FILES = ("rust-toolchain", "rust-toolchain.toml")
# A channel as rustup names one: a release (1.95, 1.95.0), stable, beta or nightly, each perhaps dated
# (nightly-2026-01-01) and followed by a host triple (1.95.0-x86_64-unknown-linux-gnu).
_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?")


def pinned(src: Path) -> tuple[str, str] | None:
    """The pin file's name and the channel it names, or None where there is no pin file or it names no channel
    (a ``path`` toolchain, only components or targets)."""
    for name in PIN_FILES:
        path = src / name
        if path.is_file():
            channel = _channel(path.read_text(encoding="utf-8", errors="replace"))
            return (name, channel) if channel else None
    return None


def unmet(src: Path, env: dict[str, str]) -> str | None:
    """An advisory where the pinned channel is not the release of the image's ``rustc``, else None."""
    pin = pinned(src)
    release = image_release(env) if pin else None
    if pin is None or release is None or meets(pin[1], release):
        return None
    name, channel = pin
    return f"{name}:0:0 toolchain {channel} is pinned: built and tested with rustc {release} (none is downloaded)"


def image_release(env: dict[str, str]) -> str | None:
    """The image's rustc release (``1.95.0``), as ``rustc -V`` prints it."""
    try:
        said = subprocess.run(["rustc", "-V"], env=env, capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    found = _RELEASE.search(said.stdout)
    return found.group() if found else None


def _channel(text: str) -> str | None:
    """The channel of a pin file: TOML with a ``[toolchain]`` table, or (the older form) the channel alone."""
    try:
        table = tomllib.loads(text).get("toolchain", {})
    except tomllib.TOMLDecodeError:
        words = text.split()
        return words[0] if len(words) == 1 else None
    channel = table.get("channel") if isinstance(table, dict) else None
    return channel.strip() if isinstance(channel, str) and channel.strip() else None


def meets(channel: str, release: str) -> bool:
    """Whether the image's stable ``release`` is what ``channel`` asks for: ``stable``, or the same release (a
    ``1.95`` pin is met by any 1.95.x)."""
    if channel == "stable" or channel.startswith("stable-"):
        return True
    asked = _RELEASE.match(channel)
    if asked is None or channel[asked.end() :][:1] not in ("", "-"):
        return False  # beta, nightly, or a name rustup would not take as a release
    return (release + ".").startswith(asked.group() + ".")
