"""detect-secrets over generated files."""

from __future__ import annotations

from mendflow.testgen.secrets import scan


def test_an_aws_key_is_found_with_its_line_and_kind() -> None:
    found = scan({"tests/test_a.py": 'import os\nKEY = "AKIAIOSFODNN7EXAMPLE"\n'})
    assert [(f.path, f.line) for f in found] == [("tests/test_a.py", 2)]
    assert "AWS" in found[0].kind and "AKIA" not in str(found[0])


def test_ordinary_test_code_has_no_finding() -> None:
    assert scan({"tests/test_a.py": "def test_half():\n    assert 4 // 2 == 2\n"}) == []
