"""Every artefact key mendflow writes, built here and nowhere else.

A repository's artefacts live under ``repos/<owner>/<name>/<commit sha>/``, so two repositories never share a
key; tools shipped to jobs (content-addressed, the same for every repository) live under ``_tools/``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

REPORT = "report.json"  # a build attempt's commit marker: written last
TOOLS = "_tools"
SERVED = "served"  # served/<owner>/<name>.json: the repositories runs were made on
HEAL_KB = "heal-kb"  # heal-kb/<category>/<when>-<id>.json: every repair attempt, across repositories
HANDOFF_DIR = ".handoff"  # under a job's prefix: a split job's installed environments, pod to pod
HANDOFF = f"{HANDOFF_DIR}/env.tar.gz"


@dataclass(frozen=True)
class RepoKeys:
    """The keys of one repository (``repo_id`` is its ``owner/name``)."""

    repo_id: str

    @property
    def root(self) -> str:
        return f"repos/{self.repo_id}"

    def commit(self, sha: str) -> str:
        return f"{self.root}/{sha}"

    def source(self, sha: str) -> str:
        """The commit's snapshot tarball, content-addressed by commit: every stage and retry reuses it."""
        return f"{self.commit(sha)}/source.tar.gz"

    def builds(self, sha: str, stage: str) -> str:
        """Prefix of every attempt of one build stage (B1, B2, build …) of a commit."""
        return f"{self.commit(sha)}/{stage}"

    def build(self, sha: str, stage: str, attempt: int) -> str:
        return f"{self.builds(sha, stage)}/{attempt}"

    def report_attempt(self, key: str, sha: str) -> tuple[str, int] | None:
        """``(stage, attempt)`` when ``key`` is a published build report of ``sha`` (``build(...)/report.json``),
        else None (a staged upload, a plan, generated tests …)."""
        prefix = f"{self.commit(sha)}/"
        parts = key.removeprefix(prefix).split("/")
        if not key.startswith(prefix) or len(parts) != 3 or parts[2] != REPORT or not parts[1].isdigit():
            return None
        return parts[0], int(parts[1])

    def staging(self, sha: str, stage: str, attempt: int, token: str) -> str:
        """Where a job's uploads land before the trusted side checks and publishes them."""
        return f"{self.build(sha, stage, attempt)}/.staging/{token}"

    def regression(self, sha: str, stage: str) -> str:
        return f"{self.builds(sha, stage)}/regression.json"

    def plan(self, sha: str, fingerprint: str) -> str:
        """The TestSpec planned for a commit under one set of planning settings."""
        return f"{self.commit(sha)}/plan/{fingerprint}.json"

    def generated(self, sha: str, spec_id: str, fingerprint: str) -> str:
        """The GeneratedTests of one spec under one set of generation settings."""
        return f"{self.testgen(sha, spec_id)}/generated-{fingerprint}.json"

    def testgen(self, sha: str, spec_id: str) -> str:
        """Prefix of one test-generation run: ``<round>/`` job artefacts of each gates round."""
        return f"{self.commit(sha)}/testgen/{spec_id}"

    def heal(self, sha: str, stage: str) -> str:
        """Prefix of the healing of one failed build: checklist, result, audit trail, re-run attempts."""
        return f"{self.commit(sha)}/heal/{stage}"

    def checklist(self, sha: str, stage: str) -> str:
        return f"{self.heal(sha, stage)}/checklist.json"

    def heal_result(self, sha: str, stage: str) -> str:
        return f"{self.heal(sha, stage)}/result.json"

    def audit(self, sha: str, stage: str, seq: int) -> str:
        """One decision of the audit trail (error, analysis, method, diff, gate verdict, approver), in order."""
        return f"{self.heal(sha, stage)}/audit/{seq:04d}.json"


def heal_attempt(category: str, stamp: str, attempt_id: str) -> str:
    """One healing attempt in the knowledge base; ``stamp`` sorts by time (e.g. '20261125T101500Z')."""
    return f"{HEAL_KB}/{category}/{stamp}-{attempt_id}.json"


def served(repo_id: str) -> str:
    return f"{SERVED}/{repo_id}.json"


def tool(name: str, digest: str, suffix: str) -> str:
    """A job tool (e.g. the test-generation zipapp), keyed by its content digest."""
    return f"{TOOLS}/{name}-{digest}{suffix}"


def fingerprint(*values: object) -> str:
    """A short digest of everything that shapes a stage's output (settings, inputs), for reuse keys."""
    text = json.dumps(values, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
