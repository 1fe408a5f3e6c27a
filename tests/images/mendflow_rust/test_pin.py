"""The toolchain a repository pins for rustup, read as rustup reads it, and whether the image's release meets it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mendflow_rust import pin


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"rust-toolchain.toml": '[toolchain]\nchannel = "1.97.1"\ncomponents = ["clippy"]\n'}, "1.97.1"),
        ({"rust-toolchain": "nightly-2026-01-01\n"}, "nightly-2026-01-01"),
        ({"rust-toolchain": '[toolchain]\nchannel = "beta"\n'}, "beta"),
        ({"rust-toolchain": "1.80\n", "rust-toolchain.toml": '[toolchain]\nchannel = "1.97"\n'}, "1.80"),
    ],
)
def test_the_channel_is_read_from_the_file_rustup_would_read(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert pin.pinned(tmp_path) == (next(iter(files)), expected)


def test_a_pin_without_a_channel_pins_nothing(tmp_path: Path) -> None:
    (tmp_path / "rust-toolchain.toml").write_text('[toolchain]\ncomponents = ["rustfmt"]\n')
    assert pin.pinned(tmp_path) is None


@pytest.mark.parametrize(
    "channel", ["stable", "stable-x86_64-unknown-linux-gnu", "1.95", "1.95.0", "1.95-x86_64-unknown-linux-gnu"]
)
def test_the_images_release_meets(channel: str) -> None:
    assert pin.meets(channel, "1.95.0")


@pytest.mark.parametrize("channel", ["1.97.1", "1.9", "1.95.1", "nightly", "nightly-2026-01-01", "beta", "1.95.0.1"])
def test_the_images_release_does_not_meet(channel: str) -> None:
    assert not pin.meets(channel, "1.95.0")
