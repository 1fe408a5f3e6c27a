"""re_core: re's parser and compiler without ``import re``, giving what re.compile gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from rag_indexer import re_core

# Run in a fresh interpreter: there re is not imported yet, so re_core loads re's files as its own package.
FRESH = r"""
import sys
from rag_indexer import re_core
loaded_alone = "re" not in sys.modules and "enum" not in sys.modules
patterns = [
    (r"def _eval_\w+\(self\)", 8), (r"(?i)straße|STRASSE", 0), (r"^class (?P<name>\w+)", 8),
    (r"(a|b)*?c{2,3}$", 10), (r"\bK\w+", 2), ("(unclosed", 0), (r"x(?=y)", 16),
    (rb"[\x80-\xff]+", 0), (rb"(?i)ABC\d", 8),
]
texts = ["def _eval_is_zero(self)\nclass Foo:\n  \u212aelvin kelvin Straße strasse\nabcc\nxy\n"]
def results(compile_, error):
    out = []
    for pattern, flags in patterns:
        try:
            c = compile_(pattern, flags)
        except error as exc:
            out.append(["error", str(exc)])
            continue
        subjects = [t.encode("utf-8") if isinstance(pattern, bytes) else t for t in texts]
        spans = [[m.span() for m in c.finditer(s)] for s in subjects]
        out.append([type(c).__name__, c.flags, c.groups, sorted(c.groupindex.items()), spans])
    return out
ours = results(re_core.compile, re_core.error)
import json, re  # json imports re
print(json.dumps({"alone": loaded_alone, "same": ours == results(re.compile, re.error), "ours": ours}))
"""


def test_in_a_fresh_interpreter_it_compiles_as_re_does_without_importing_re() -> None:
    run = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, check=True)
    result = json.loads(run.stdout)
    assert result["alone"] and result["same"], result["ours"]


def test_once_re_is_imported_it_uses_re_s_own_modules() -> None:
    assert re_core.compiler is sys.modules["re._compiler"] and re_core.error is re.error


# re's directory found, but not holding 3.11's modules (another Python's layout): re's own import answers.
ELSEWHERE = r"""
import sys, types
finder = sys.modules["_frozen_importlib_external"].PathFinder
found = finder.find_spec
elsewhere = [types.SimpleNamespace(submodule_search_locations=[sys.argv[1]])]  # for re_core's lookup alone
finder.find_spec = lambda name, path=None, target=None: (
    elsewhere.pop() if name == "re" and elsewhere else found(name, path, target))
from rag_indexer import re_core
left = sorted(n for n in sys.modules if n.startswith("_re_core"))
print(re_core.compiler is sys.modules["re._compiler"], left, re_core.compile(r"\d+", 0).findall("a1b22"))
"""


def test_where_re_s_modules_are_not_found_it_falls_back_to_re(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", ELSEWHERE, str(tmp_path)], capture_output=True, text=True)
    assert run.stdout.strip() == "True [] ['1', '22']", run.stderr
