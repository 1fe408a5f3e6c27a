from __future__ import annotations

from pathlib import Path

import pytest

from mendflow.errors import ConfigError
from mendflow.launcher import get_launcher
from mendflow.launcher.local import LocalLauncher
from mendflow.settings import Settings


def test_local_setting_gives_the_local_launcher(tmp_path: Path) -> None:
    assert isinstance(get_launcher(Settings(launcher="local", cache_dir=tmp_path)), LocalLauncher)


def test_unknown_launcher_is_a_config_error(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path).model_copy(update={"launcher": "nomad"})
    with pytest.raises(ConfigError, match="nomad"):
        get_launcher(settings)
