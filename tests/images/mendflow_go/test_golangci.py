"""Which golangci-lint configurations may load a plugin (``mendflow_go.golangci.loads_plugins``): those lint with
the job's own caches."""

from __future__ import annotations

from pathlib import Path

import pytest
from mendflow_go import golangci

PLAIN = 'version: "2"\nlinters:\n  default: none\n  enable:\n    - errcheck\n'


@pytest.mark.parametrize(
    "config",
    [
        PLAIN + "  settings:\n    custom:\n      mine:\n        path: mine.so\n",
        PLAIN + "  settings:\n    Custom:\n      mine:\n        path: mine.so\n",  # viper's keys match in any case
        PLAIN + '  settings:\n    "\\x63ustom":\n      mine:\n        path: mine.so\n',
        '{"linters": {"settings": {"\\u0063ustom": {"mine": {"path": "mine.so"}}}}}',
        PLAIN + '  settings:\n    "cus\\\n      tom":\n      mine:\n        path: mine.so\n',
        PLAIN + "  settings:\n    !!str custom:\n      mine:\n        path: mine.so\n",
    ],
    ids=["yaml", "any-case", "yaml-escape", "json-escape", "escaped-line-break", "yaml-tag"],
)
def test_a_configuration_that_may_name_custom_linters_may_load_a_plugin(config: str, tmp_path: Path) -> None:
    path = tmp_path / ".golangci.yml"
    path.write_text(config)
    assert golangci.loads_plugins(path)


def test_a_longer_key_starting_with_custom_loads_no_plugin(tmp_path: Path) -> None:
    path = tmp_path / ".golangci.yml"
    path.write_text(PLAIN.replace("linters:", "formatters:\n  settings:\n    gci:\n      custom-order: true\nlinters:"))
    assert not golangci.loads_plugins(path)


def test_a_configuration_with_regular_expressions_loads_no_plugin(tmp_path: Path) -> None:
    path = tmp_path / ".golangci.yml"
    path.write_text(PLAIN + "  exclusions:\n    paths:\n      - '\\.pb\\.go$'\n      - 'third_party/.*\\d+'\n")
    assert not golangci.loads_plugins(path)
