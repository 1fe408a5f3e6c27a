"""The pod's entrypoint on Kubernetes (stdlib only): fetch inputs, run the command, deliver outputs.

    python -m mendflow_runner.transfer -- ARGV...

The job holds no credential: ``MENDFLOW_TRANSFER`` (JSON ``{"inputs": {name: url}, "outputs": {name: url}}``)
carries presigned GET/PUT URLs only. Steps:

1. GET every input into ``$MENDFLOW_WORKSPACE/in/<name>`` (temp file, then rename).
2. Run ARGV in the workspace with ``MENDFLOW_TRANSFER`` removed from its environment; its output is copied to
   our stdout (the pod log) and its last lines kept.
3. PUT every ``out/<name>`` that exists to its URL; ``report.json`` goes last because the trusted side treats
   it as the commit marker of the attempt.
4. Write a JSON summary to the termination-message file (``/dev/termination-log``, read back by the
   launcher from the pod status without another API call) and exit with the command's exit code, or
   ``EXIT_TRANSFER_ERROR`` when a transfer failed (a command that never ran or whose results were lost).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path
from types import FrameType
from typing import Any

EXIT_TRANSFER_ERROR = 125  # like `docker run`: the wrapper failed, not the command
REPORT_NAME = "report.json"  # uploaded last: its presence means the other outputs are complete
MARKER = "mendflow_transfer"  # key identifying our termination message among arbitrary text
TERMINATION_LIMIT = 4096  # bytes the kubelet keeps of a termination message
_ATTEMPTS = 4
_CHUNK = 1 << 20
_TIMEOUT_SEC = 120


class TransferError(Exception):
    pass


def _log(message: str) -> None:
    print(f"[mendflow-transfer] {message}", file=sys.stderr, flush=True)


def _safe_name(name: str) -> str:
    # Names become file names under in/ and out/: the manifest comes from the trusted side, but a
    # path separator or '..' would still let a typo escape the workspace.
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise TransferError(f"bad artefact name {name!r}")
    return name


def _retrying(what: str, action: Any) -> Any:
    """Retry transient failures (network, 5xx, 429) with a short exponential back-off."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return action()
        except urllib.error.HTTPError as exc:
            if (exc.code < 500 and exc.code != 429) or attempt == _ATTEMPTS:
                raise TransferError(f"{what}: HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            if attempt == _ATTEMPTS:
                raise TransferError(f"{what}: {exc}") from exc
        _log(f"{what}: attempt {attempt} failed, retrying")
        time.sleep(0.5 * 2**attempt)
    raise AssertionError("unreachable")


def fetch(url: str, dest: Path) -> int:
    """GET ``url`` into ``dest`` atomically; returns the byte count."""
    tmp = dest.with_name(f".{dest.name}.part")

    def once() -> int:
        size = 0
        with urllib.request.urlopen(url, timeout=_TIMEOUT_SEC) as resp, open(tmp, "wb") as out:
            while chunk := resp.read(_CHUNK):
                out.write(chunk)
                size += len(chunk)
        tmp.replace(dest)
        return size

    return int(_retrying(f"fetching {dest.name}", once))


def deliver(path: Path, url: str) -> None:
    """PUT ``path`` to a presigned URL, streaming it (no Content-Type is signed, so any is accepted)."""

    def once() -> None:
        with open(path, "rb") as body:
            request = urllib.request.Request(url, data=body, method="PUT")
            request.add_header("Content-Length", str(path.stat().st_size))
            request.add_header("Content-Type", "application/octet-stream")
            with urllib.request.urlopen(request, timeout=_TIMEOUT_SEC) as resp:
                resp.read()

    _retrying(f"uploading {path.name}", once)


def upload_order(outputs: dict[str, str]) -> list[str]:
    return sorted(outputs, key=lambda name: name == REPORT_NAME)  # stable: only moves the report last


def run_command(argv: list[str], workspace: Path, tail: deque[str]) -> int:
    """Run the command, copy its output to stdout and keep the last lines; forward SIGTERM/SIGINT."""
    env = {k: v for k, v in os.environ.items() if k != "MENDFLOW_TRANSFER"}
    proc = subprocess.Popen(
        argv,
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )

    def forward(signum: int, _frame: FrameType | None) -> None:
        # The kubelet signals PID 1 (us) at the deadline; the command must get the chance to stop cleanly.
        proc.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        sys.stdout.write(line)
        sys.stdout.flush()
        tail.append(line)
    return proc.wait()


def summary(exit_code: int, delivered: list[str], error: str | None, tail: deque[str]) -> str:
    """The termination message: our JSON, with as much of the output's tail as fits the kubelet's limit."""
    doc: dict[str, Any] = {
        MARKER: 1,
        "exit_code": exit_code,
        "delivered": delivered,
        "error": error,
        "tail": "",
    }
    text = "".join(tail)
    keep = TERMINATION_LIMIT - len(json.dumps(doc).encode())
    while keep > 0 and len(json.dumps({**doc, "tail": text[-keep:]}).encode()) > TERMINATION_LIMIT:
        keep -= 128  # escaping and multi-byte characters make the JSON longer than the text
    doc["tail"] = text[-keep:] if keep > 0 else ""
    return json.dumps(doc)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        _log("usage: python -m mendflow_runner.transfer -- COMMAND...")
        return 2
    workspace = Path(os.environ.get("MENDFLOW_WORKSPACE", "/workspace"))
    termination_log = Path(os.environ.get("MENDFLOW_TERMINATION_LOG", "/dev/termination-log"))
    tail: deque[str] = deque(maxlen=60)
    delivered: list[str] = []
    error: str | None = None
    exit_code: int | None = None  # None until the command has run
    try:
        manifest = json.loads(os.environ.get("MENDFLOW_TRANSFER") or "{}")
        inputs, outputs = dict(manifest.get("inputs", {})), dict(manifest.get("outputs", {}))
        (workspace / "in").mkdir(parents=True, exist_ok=True)
        (workspace / "out").mkdir(parents=True, exist_ok=True)
        for name, url in inputs.items():
            size = fetch(url, workspace / "in" / _safe_name(name))
            _log(f"fetched {name} ({size} bytes)")
        exit_code = run_command(args, workspace, tail)
        for name in upload_order(outputs):
            path = workspace / "out" / _safe_name(name)
            if path.is_file():
                deliver(path, outputs[name])
                delivered.append(name)
        _log(f"exit code {exit_code}; delivered {delivered or 'nothing'}")
    except (TransferError, ValueError, OSError) as exc:
        error = str(exc)
        _log(f"error: {error}")
    # A command that never ran, or succeeded but whose results were lost, is not a success.
    code = exit_code if exit_code is not None and (error is None or exit_code != 0) else EXIT_TRANSFER_ERROR
    try:
        termination_log.write_text(summary(code, delivered, error, tail))
    except OSError as exc:  # not fatal: the launcher falls back to the exit code and the logs
        _log(f"could not write {termination_log}: {exc}")
    return code


if __name__ == "__main__":
    sys.exit(main())
