"""A scripted model for ``heal_bench.py --scripted-model``: an OpenAI-compatible server that answers the healer's
prompts like a naive but format-following model. It is NOT a language model and says nothing about a model's
quality: it lets the bench measure mendflow's LLM path (payload validation, escalation, the no-weakening gate,
re-runs, tokens) end to end without a network or weights.

    uv run --frozen python bench/heal_model.py [--port 0]     # serve until interrupted, print the base URL

``POST /v1/chat/completions`` with the heal prompt (``mendflow/heal/llm_heal.py``: system "You are Test-Healer
v1", user sections FAILING TEST, ERROR, ANALYSIS, WHAT THE COMMIT CHANGED, FILES with numbered lines, optionally
THE PREVIOUS ATTEMPT FAILED, and the method guide) or the source-fix proposal prompt
(``mendflow/heal/proposal.py``: system "You are Code-Fixer v1", same user sections) is answered with one JSON
``HealEdit``. Anything else gets HTTP 400.

How it answers: from WHAT THE COMMIT CHANGED it reads the sentences ``mendflow/heal/changes.py`` writes —
``pkg.mod.old renamed to pkg.mod.new``, ``pkg.a.f moved to pkg.b.f``, ``parameters of pkg.mod.f renamed: 'a' →
'b'`` — and rewrites the shown file by word-boundary text replacement: a renamed name everywhere; a moved name's
``from old import`` lines (a name imported with others is split onto its own import) and ``old.name``
accesses; a renamed parameter where it is passed as ``keyword=``. Signature changes and diffs (the proposal
prompt's change is the commit's diff) give it nothing. It answers in the payload the guide asks for: ``update``
with the first changed line as ``old_str`` (which may well occur more than once: the healer must escalate),
``patch`` as a ``difflib`` unified diff, ``new_content`` as the whole file. When it derived nothing it answers a
valid payload that changes nothing (the edit layer refuses it, so the attempt fails honestly). The file text is
rebuilt from the numbered lines, so it always ends with a newline.

Usage: ``prompt_tokens`` = characters of all messages / 4, ``completion_tokens`` = characters of the answer / 4.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "scripted-heal-model"
HEALER_SYSTEM = "You are Test-Healer v1."
FIXER_SYSTEM = "You are Code-Fixer v1."
HEADERS = ("FAILING TEST", "ERROR", "ANALYSIS", "WHAT THE COMMIT CHANGED", "FILES")
FEEDBACK_HEADER = "THE PREVIOUS ATTEMPT FAILED"
_GUIDE = re.compile(r'^Answer with an? "(?P<payload>update|patch|new_content)" payload', re.MULTILINE)
_FILE = re.compile(r"^=== (?P<path>.+?) ===\n(?P<body>.*?)\n?=== end of (?P=path) ===$", re.MULTILINE | re.DOTALL)
_DOTTED = r"[A-Za-z_][\w.]*"
_RENAMED = re.compile(rf"\b(?P<old>{_DOTTED}) renamed to (?P<new>{_DOTTED})")
_MOVED = re.compile(rf"\b(?P<old>{_DOTTED})\.(?P<name>\w+) moved to (?P<new>{_DOTTED})\.(?P=name)\b")
_PARAMS = re.compile(rf"parameters of (?P<func>{_DOTTED}) renamed: (?P<pairs>.*)")
_PAIR = re.compile(r"'(?P<old>\w+)' → '(?P<new>\w+)'")


class PromptError(ValueError):
    """Not a prompt this model plays."""


@dataclass(frozen=True)
class Prompt:
    role: str  # "heal" or "propose"
    sections: dict[str, str]  # header → text
    files: dict[str, str]  # path → text (line numbers removed)
    payload: str  # "update", "patch" or "new_content"

    @property
    def change(self) -> str:
        return self.sections.get("WHAT THE COMMIT CHANGED", "")


def parse_prompt(messages: list[dict[str, Any]]) -> Prompt:
    """The heal or proposal prompt in ``messages`` (a corrective round trip repeats it: the first user turn
    counts); PromptError for anything else."""
    system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), "")
    if system.startswith(HEALER_SYSTEM):
        role = "heal"
    elif system.startswith(FIXER_SYSTEM):
        role = "propose"
    else:
        raise PromptError("not a Test-Healer or Code-Fixer prompt")
    user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
    lines = user.splitlines()
    starts: list[tuple[int, str]] = []
    for header in HEADERS:  # in order, each after the previous one
        after = starts[-1][0] + 1 if starts else 0
        at = next((i for i in range(after, len(lines)) if lines[i].split(" (", 1)[0] == header), None)
        if at is None:
            raise PromptError(f"no {header} section")
        starts.append((at, header))
    sections = {}
    for (at, header), nxt in zip(starts, [*starts[1:], (len(lines), "")], strict=True):
        sections[header] = "\n".join(lines[at + 1 : nxt[0]]).strip()
    guides = list(_GUIDE.finditer(user))
    if not guides:
        raise PromptError("no method guide")
    files_text = "\n".join(lines[starts[-1][0] + 1 :])
    files = {m["path"]: _unnumbered(m["body"]) for m in _FILE.finditer(files_text)}
    if not files:
        raise PromptError("no files shown")
    if FEEDBACK_HEADER in files_text:
        sections[FEEDBACK_HEADER] = files_text.split(FEEDBACK_HEADER, 1)[1].split("\n", 1)[-1].strip()
    return Prompt(role, sections, files, guides[-1]["payload"])


def _unnumbered(body: str) -> str:
    """``   3 | text`` lines back to the file's text (always ending with a newline)."""
    out = [line.split(" | ", 1)[1] if " | " in line else line.rstrip() for line in body.split("\n")]
    return "\n".join(out) + "\n" if out else ""


# -- what a naive model makes of the change -------------------------------------------------------------------
def rewrite(text: str, change: str) -> tuple[str, list[str]]:
    """``text`` rewritten for every change sentence in ``change``, and what was done (as reasoning)."""
    done: list[str] = []
    for m in _RENAMED.finditer(change):
        old, new = m["old"].rsplit(".", 1)[-1], m["new"].rsplit(".", 1)[-1]
        after = re.sub(rf"(?<![\w]){re.escape(old)}(?!\w)", new, text)
        if after != text:
            text, done = after, [*done, f"{old} → {new}"]
    for m in _MOVED.finditer(change):
        after = _moved(text, m["old"], m["new"], m["name"])
        if after != text:
            text, done = after, [*done, f"{m['name']} imported from {m['new']}"]
    for m in _PARAMS.finditer(change):
        for pair in _PAIR.finditer(m["pairs"]):
            old, new = pair["old"], pair["new"]
            after = re.sub(rf"(?<=[(,])(\s*){old}(?=\s*=(?!=))", rf"\g<1>{new}", text)
            after = re.sub(rf"^(\s+){old}(?==(?!=))", rf"\g<1>{new}", after, flags=re.MULTILINE)
            if after != text:
                text, done = after, [*done, f"keyword {old}= → {new}="]
    return text, done


def _moved(text: str, old: str, new: str, name: str) -> str:
    """``from old import name`` → ``from new import name`` (split off when imported with others), ``old.name``
    → ``new.name``."""
    out = []
    imports = re.compile(rf"^(?P<indent>\s*)from {re.escape(old)} import (?P<names>[^()\\#\n]+?)\s*$")
    for line in text.split("\n"):
        m = imports.match(line)
        names = [n.strip() for n in m["names"].split(",")] if m else []
        mine = [n for n in names if n.split(" as ")[0].strip() == name]
        if m and mine:
            rest = [n for n in names if n not in mine]
            if rest:
                out.append(f"{m['indent']}from {old} import {', '.join(rest)}")
            out.append(f"{m['indent']}from {new} import {', '.join(mine)}")
            continue
        out.append(re.sub(rf"(?<![\w.]){re.escape(old)}\.{re.escape(name)}(?!\w)", f"{new}.{name}", line))
    return "\n".join(out)


# -- answers --------------------------------------------------------------------------------------------------
def answer(prompt: Prompt) -> dict[str, Any]:
    """The ``HealEdit`` the scripted model gives for ``prompt``."""
    path, before, after, done = next(iter(prompt.files)), "", "", list[str]()
    for candidate, text in prompt.files.items():
        new, what = rewrite(text, prompt.change)
        if new != text:
            path, before, after, done = candidate, text, new, what
            break
    else:
        before = after = prompt.files[path]
    reasoning = "scripted model: " + ("; ".join(done) if done else "nothing derived from the change, no edit")
    edit: dict[str, Any] = {"reasoning": reasoning, "file_to_patch": path}
    if prompt.payload == "new_content":
        edit["new_content"] = after
    elif prompt.payload == "patch":
        edit["patch"] = _patch(path, before, after) if after != before else _noop_patch(path, before)
    else:
        edit["update"] = _update(before, after)
    return edit


def _update(before: str, after: str) -> dict[str, str]:
    """The first changed line (no neighbours, so it may not be unique); an unchanged first line when nothing
    changed."""
    old_lines, new_lines = before.split("\n"), after.split("\n")
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 > i1 and j2 > j1:
            return {"old_str": old_lines[i1], "new_str": new_lines[j1]}
        old = "\n".join(old_lines[i1 - 1 : i2]) if i1 else "\n".join(old_lines[i1 : i2 + 1])
        new = "\n".join(new_lines[j1 - 1 : j2]) if i1 else "\n".join(new_lines[j1 : j2 + 1])
        return {"old_str": old, "new_str": new}
    first = next((line for line in old_lines if line.strip()), before or "\n")
    return {"old_str": first, "new_str": first}


def _patch(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


def _noop_patch(path: str, text: str) -> str:
    """A well-formed hunk that removes and re-adds the first line: applies, changes nothing."""
    first = text.splitlines()[0] if text.splitlines() else ""
    return f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-{first}\n+{first}\n"


def tokens(messages: list[dict[str, Any]], content: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
    completion = len(content) // 4
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


# -- serving --------------------------------------------------------------------------------------------------
@dataclass
class ScriptedModel:
    """What the server answered, for the bench's footnote (thread-safe)."""

    answered: Counter[str] = field(default_factory=Counter)  # "heal update", "propose patch", "no edit", ...
    refused: int = 0
    tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        messages = body.get("messages")
        if not isinstance(messages, list):
            messages = []
        try:
            prompt = parse_prompt(messages)
        except PromptError as exc:
            with self._lock:
                self.refused += 1
            return 400, {"error": {"message": f"the scripted heal model does not answer this: {exc}",
                                   "type": "invalid_request_error", "code": 400}}  # fmt: skip
        edit = answer(prompt)
        content = json.dumps(edit)
        usage = tokens(messages, content)
        with self._lock:
            self.answered[f"{prompt.role} {prompt.payload}"] += 1
            self.answered["no edit" if "no edit" in edit["reasoning"] else "edit"] += 1
            self.tokens += usage["total_tokens"]
        return 200, {
            "id": "chatcmpl-scripted-heal",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": str(body.get("model") or MODEL),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": usage,
        }

    def summary(self) -> str:
        with self._lock:
            said = ", ".join(f"{k} {v}" for k, v in sorted(self.answered.items()))
            return f"{said or 'no prompts'}; refused {self.refused}; {self.tokens} tokens"


def _handler(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = None
            if self.path.rstrip("/").endswith("/chat/completions") and isinstance(body, dict):
                status, out = model.chat(body)
            else:
                status, out = 400, {"error": {"message": f"not a chat completion: {self.path}", "code": 400}}
            payload = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            if status != 200:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


class Server:
    """The scripted model on a loopback port in a daemon thread: ``with Server() as s: s.url``."""

    def __init__(self, port: int = 0) -> None:
        self.model = ScriptedModel()
        self._http = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.model))
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._http.serve_forever, name="scripted-heal-model", daemon=True)

    def __enter__(self) -> Server:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    with Server(args.port) as server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
        print(server.model.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
