"""mendflow's LCOV of V8's coverage data (``mendflow_node.v8``), against c8's of the same data."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest
from mendflow_node import v8

C8 = "10.1.3"
# Branches, a function V8 never ran, the ignore comments, an arrow function, a class, a character of two UTF-16
# units before code on its line, and blank and comment lines.
CALC = """\
'use strict';

// A comment line
function add(a, b) {
  return a + b;
}

function sign(x) {
  if (x < 0) {
    return -1;
  } else if (x === 0) {
    return 0;
  }
  return 1;
}

const label = (x) => x > 0 ? 'pos' : 'neg'; // \U0001f600 before code

/* c8 ignore next 3 */
function never() {
  return 'never';
}

function unused(a) {
  const b = a * 2;

  return b + 1;
}

/* c8 ignore start */
function alsoNever() {
  return 1;
}
/* c8 ignore stop */

class Box {
  constructor(v) { this.v = v; }
  get() { return this.v; }
  set(v) {
    if (v == null) throw new Error('no');
    this.v = v;
  }
}

module.exports = { add, sign, label, never, unused, alsoNever, Box };
"""
BOM_CRLF = "\ufeffexports.bom = (x) => {\r\n  if (x) {\r\n    return 1;\r\n  }\r\n  return 2;\r\n};\r\n"
SHEBANG = "#!/usr/bin/env node\nfunction main(argv) {\n  if (argv.length > 5) {\n    return 'long';\n  }\n"
SHEBANG += "  return 'x';\n}\nmodule.exports = main;\n"
FIRST = """\
const c = require('../lib/calc.js');
c.add(1, 2); c.sign(-3); c.sign(5); c.label(1);
new c.Box(1).get();
require('../lib/bom.js').bom(1);
require('../lib/bin.js')([]);
"""
SECOND = "const c = require('../lib/calc.js');\nc.sign(0); c.label(-1);\nnew c.Box(2).set(3);\n"


@pytest.fixture(scope="module")
def c8(tmp_path_factory: pytest.TempPathFactory, node_cache: Path) -> Path:
    """The real c8, from the npm registry."""
    where = tmp_path_factory.mktemp("c8")
    env = {**os.environ, "npm_config_cache": str(node_cache / "v8-test-npm")}
    install = ["npm", "install", "--no-audit", "--no-fund", "--no-save", f"c8@{C8}"]
    subprocess.run(install, cwd=where, env=env, check=True, capture_output=True, timeout=600)
    return where / "node_modules" / ".bin" / "c8"


def _package(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "test").mkdir()
    (root / "lib" / "calc.js").write_text(CALC, encoding="utf-8")
    (root / "lib" / "bom.js").write_bytes(BOM_CRLF.encode("utf-8"))
    (root / "lib" / "bin.js").write_text(SHEBANG, encoding="utf-8")
    (root / "test" / "first.js").write_text(FIRST, encoding="utf-8")
    (root / "test" / "second.js").write_text(SECOND, encoding="utf-8")
    return root


def _measure(package: Path, *tests: str) -> Path:
    data = package / "v8-data"
    for test in tests:
        env = {"PATH": os.environ["PATH"], "NODE_V8_COVERAGE": str(data)}
        subprocess.run(["node", test], cwd=package, env=env, check=True, timeout=60)
    return data


def _records(lcov: str) -> dict[str, dict[str, list[str]]]:
    """Each file's DA, BRDA, FN and FNDA values, in order."""
    out: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for line in lcov.splitlines():
        tag, _, value = line.partition(":")
        if tag == "SF":
            current = out.setdefault(value, {"DA": [], "BRDA": [], "FN": [], "FNDA": []})
        elif tag in current:
            current[tag].append(value)
    return out


def _c8s(c8: Path, package: Path, data: Path) -> str:
    report = [str(c8), "report", "--reporter=lcovonly", "--report-dir=c8-out", f"--temp-directory={data}"]
    subprocess.run(report, cwd=package, check=True, capture_output=True, timeout=120)
    return (package / "c8-out" / "lcov.info").read_text(encoding="utf-8")


@pytest.mark.parametrize("tests", [["test/first.js"], ["test/first.js", "test/second.js"]], ids=["one", "two"])
def test_the_lcov_is_c8s_of_the_same_data(tests: list[str], c8: Path, tmp_path: Path) -> None:
    # V8's own data, from one process or two: `c8 report` reads the same files, and rewrites none of them
    package = _package(tmp_path / "pkg")
    data = _measure(package, *tests)
    ours, compiled = v8.to_lcov(data, package)
    theirs = _records(_c8s(c8, package, data))
    assert (_records(ours), compiled) == (theirs, [])
    assert sorted(theirs) == ["lib/bin.js", "lib/bom.js", "lib/calc.js"]


def test_test_files_and_dependencies_are_not_reported(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg")
    (package / "node_modules" / "dep").mkdir(parents=True)
    (package / "node_modules" / "dep" / "index.js").write_text("module.exports = 1;\n")
    (package / "lib" / "calc.test.js").write_text("require('dep');\nrequire('./calc.js');\n")
    data = _measure(package, "lib/calc.test.js")
    assert sorted(_records(v8.to_lcov(data, package)[0])) == ["lib/calc.js"]


def test_a_script_run_from_a_source_map_is_named_and_not_reported(tmp_path: Path) -> None:
    # what tsc or a bundler emits: V8's offsets are the emitted code's, not the source the map names
    package = _package(tmp_path / "pkg")
    source_map = {"version": 3, "file": "out.js", "sources": ["../src/out.ts"], "names": [], "mappings": "AAAA"}
    inline = base64.b64encode(json.dumps(source_map).encode()).decode()
    (package / "dist").mkdir()
    emitted = f"exports.one = 1;\n//# sourceMappingURL=data:application/json;base64,{inline}\n"
    (package / "dist" / "out.js").write_text(emitted)
    (package / "test" / "dist.js").write_text("require('../dist/out.js');\nrequire('../lib/calc.js');\n")
    lcov, compiled = v8.to_lcov(_measure(package, "test/dist.js"), package)
    assert (sorted(_records(lcov)), compiled) == (["lib/calc.js"], ["dist/out.js"])


def test_no_data_is_no_lcov(tmp_path: Path) -> None:
    (tmp_path / "v8").mkdir()
    assert v8.to_lcov(tmp_path / "v8", tmp_path) == ("", [])


def test_a_file_a_process_cut_short_is_skipped(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg")
    data = _measure(package, "test/second.js")
    (data / "coverage-1-1-0.json").write_text('{"result": [{"url": "file:///x.js", "functions": [')
    assert sorted(_records(v8.to_lcov(data, package)[0])) == ["lib/calc.js"]
