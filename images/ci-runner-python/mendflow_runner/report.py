"""Assemble report.json (a dict matching ``mendflow.contracts.BuildReport``), write it, and upload outputs."""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import __version__
from .config import JobConfig
from .proc import Log

UPLOAD_ATTEMPTS = 3
UPLOAD_TIMEOUT_SEC = 60


@dataclass
class Report:
    cfg: JobConfig
    status: str = "PASSED"
    fail_reason: str | None = None
    error_reason: str | None = None
    transient: bool | None = None  # an ERRORED build's: whether trying again may help (None: not judged)
    failed_tests: list[str] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)  # TestFailure dicts, failed_tests' order
    selected: list[str] = field(default_factory=list)
    lint_errors: list[str] = field(default_factory=list)
    lint_advisory: list[str] = field(default_factory=list)  # a repo that chose no ruff: advice, never fatal
    counts: dict[str, int] = field(default_factory=dict)
    runs: int = 1  # test runs made (``--runs``): the last is the one the counts and failures describe
    test_command: list[str] = field(default_factory=list)
    coverage: dict[str, Any] | None = None
    durations: dict[str, float] = field(default_factory=dict)
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def errored(self, reason: str, message: str, transient: bool | None = None) -> None:
        self.status, self.fail_reason, self.error_reason = "ERRORED", reason, message
        self.transient = transient

    def failed(self, reason: str, message: str | None = None) -> None:
        self.status, self.fail_reason = "FAILED", reason
        if message:
            self.error_reason = message

    def passed_after_all(self, nodes: set[str]) -> None:
        """The failed tests ``nodes`` counted as passed (each a failure detailed in ``failures``)."""
        kinds = [f.get("kind") for f in self.failures if f["node_id"] in nodes]
        failed = kinds.count("failed")
        self.counts = {
            **self.counts,
            "passed": self.counts.get("passed", 0) + len(kinds),
            "failed": self.counts.get("failed", 0) - failed,
            "errors": self.counts.get("errors", 0) - (len(kinds) - failed),
        }
        self.failed_tests = [node for node in self.failed_tests if node not in nodes]
        self.failures = [f for f in self.failures if f["node_id"] not in nodes]

    def tests_dropped(self) -> None:
        """What the tests found, dropped, with their coverage: a build that fails runs no test, and one check of it
        (Node's type check) ran beside them."""
        self.counts, self.failed_tests, self.failures, self.test_command, self.coverage = {}, [], [], [], None
        (self.cfg.out / "coverage.json").unlink(missing_ok=True)

    def to_dict(self) -> dict[str, Any]:
        total = round(time.monotonic() - self.cfg.started, 3)
        counts = {k: int(self.counts.get(k, 0)) for k in ("total", "passed", "failed", "errors", "skipped")}
        line_pct = self.coverage["line_pct"] if self.coverage else None
        return {
            "schema_version": 1,
            "repo": self.cfg.repo,
            "commit_sha": self.cfg.commit,
            "branch_name": self.cfg.branch,
            "stage": self.cfg.stage,
            "attempt": self.cfg.attempt,
            "status": self.status,
            "failed_tests": self.failed_tests,
            "failures": self.failures,
            "selected": self.selected,
            "lint_errors": self.lint_errors,
            "lint_advisory": self.lint_advisory,
            "tests": counts,
            "runs": self.runs,
            "test_command": self.test_command,
            "coverage": self.coverage,
            "artefact_url": "",
            "durations": {**{k: round(v, 3) for k, v in self.durations.items()}, "total": total},
            "error_reason": self.error_reason,
            "fail_reason": self.fail_reason,
            "transient": self.transient,
            "metrics": {
                "ci_build_duration": total,
                "ci_tests_passed_total": counts["passed"],
                "ci_coverage_line_pct": line_pct,
                "ci_fail_reason": self.fail_reason,
            },
            "started_at": self.started_at.isoformat(),
            "finished_at": datetime.now(UTC).isoformat(),
            "runner_version": __version__,
        }


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def put(url: str, body: bytes) -> int:
    """PUT with only Host and Content-Length: a presigned S3 URL must not see headers it did not sign."""
    parts = urllib.parse.urlsplit(url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.netloc, timeout=UPLOAD_TIMEOUT_SEC)
    try:
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        conn.putrequest("PUT", target, skip_accept_encoding=True)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


# The file whose arrival means the job is over (a build's report, fix mode's fixes): uploaded last.
COMMIT_MARKERS = ("report.json", "fixes.json")


def upload_all(out: Path, uploads: list[tuple[str, str]], log: Log) -> list[str]:
    """Uploads every NAME=URL from ``out/NAME``, the commit marker last; returns the names that failed."""
    ordered = sorted(uploads, key=lambda u: u[0] in COMMIT_MARKERS)
    failed = []
    for name, url in ordered:
        path = out / name
        if not path.is_file():
            log.write(f"upload {name}: skipped, {path} was not produced")
            continue
        if not _upload_one(path, url, name, log):
            failed.append(name)
    return failed


def _upload_one(path: Path, url: str, name: str, log: Log) -> bool:
    body = path.read_bytes()
    shown = url.split("?", 1)[0]  # the query string carries the signature; keep it out of logs
    for attempt in range(1, UPLOAD_ATTEMPTS + 1):
        try:
            status = put(url, body)
        except OSError as exc:
            log.write(f"upload {name} to {shown}: attempt {attempt} failed: {exc}")
        else:
            if 200 <= status < 300:
                log.write(f"upload {name} to {shown}: HTTP {status}")
                return True
            log.write(f"upload {name} to {shown}: attempt {attempt} got HTTP {status}")
        time.sleep(attempt)
    return False
