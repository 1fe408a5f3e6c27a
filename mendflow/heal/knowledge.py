"""Seed 004's healing knowledge base and learning engine: which repair method works, learned across repositories.

Every repair attempt is one JSON file in the artefact store (``keys.heal_attempt``: ``heal-kb/<category>/<when>-<id>
.json``), written once and never rewritten; the id is a digest of the attempt, so recording the same attempt
twice (a retried task) writes nothing new. Nothing is aggregated in place, so concurrent flows never race on a
shared counter: the engine counts outcomes when it reads them.

The learning engine chooses the method the LLM is asked for. Seed 004's decision tree gives the *prior* (the
caller passes it); once outcomes for a (category, healer) pair exist, measured success takes over through a
Beta-Bernoulli bandit per (category, healer, method), sampled by Thompson sampling.
"""

from __future__ import annotations

import logging
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import ValidationError

from mendflow import keys
from mendflow.contracts import Assessment, ErrorCategory, HealAttempt, HealMethod
from mendflow.errors import StoreError
from mendflow.store.base import ArtefactStore

log = logging.getLogger(__name__)

METHOD_ORDER: tuple[HealMethod, ...] = (HealMethod.UPDATE, HealMethod.PATCH, HealMethod.REWRITE)  # cheapest first
PRIOR_SUCCESSES = 2  # pseudo-successes the decision tree's method starts with: Beta(1 + 2, 1)
OTHER_FAILURES = 1  # pseudo-failure every other method starts with: Beta(1, 1 + 1)


def escalation(first: HealMethod) -> list[HealMethod]:
    """The methods to try, in order, after ``first`` failed: always a bigger tool, never back down.

    ``update`` → ``patch`` → ``rewrite``; after a failed ``rewrite`` there is nothing left.
    """
    return list(METHOD_ORDER[METHOD_ORDER.index(first) + 1 :])


@dataclass(frozen=True)
class LearnedChoice:
    """One row of what the engine has learned: how one method fared for one (category, healer)."""

    category: ErrorCategory
    healer: str
    method: HealMethod
    attempts: int
    successes: int
    chosen: HealMethod  # what the engine now prefers for this (category, healer), on measured success alone

    @property
    def success_rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0


@dataclass
class _Tally:
    attempts: int = 0
    successes: int = 0

    @property
    def failures(self) -> int:
        return self.attempts - self.successes


Tallies = dict[HealMethod, _Tally]


def _tallies(attempts: Iterable[HealAttempt]) -> dict[tuple[ErrorCategory, str], Tallies]:
    table: dict[tuple[ErrorCategory, str], Tallies] = defaultdict(lambda: defaultdict(_Tally))
    for a in attempts:
        tally = table[(a.category, a.healer)][a.method]
        tally.attempts += 1
        tally.successes += a.success
    return table


def _greedy(tallies: Tallies) -> HealMethod:
    """The method with the best smoothed success rate (s + 1) / (n + 2) among those tried; cheaper on ties."""
    tried = [m for m in METHOD_ORDER if tallies.get(m, _Tally()).attempts]
    return max(tried, key=lambda m: ((tallies[m].successes + 1) / (tallies[m].attempts + 2), -METHOD_ORDER.index(m)))


class KnowledgeBase:
    """Repair attempts across repositories, in the artefact store, and the learning engine that reads them.

    ``rng`` drives Thompson sampling: pass ``random.Random(seed)`` for a deterministic choice.
    """

    def __init__(self, store: ArtefactStore, rng: random.Random | None = None) -> None:
        self.store = store
        self.rng = rng or random.Random()
        self._read: dict[str, HealAttempt | None] = {}  # key → attempt (None: unreadable); files never change

    # -- the knowledge base ------------------------------------------------------------------------------

    def record(self, attempt: HealAttempt) -> None:
        """Store one attempt as its own file; the same attempt recorded again is not written twice."""
        at = attempt.at or datetime.now(UTC)
        stamp = at.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        data = attempt.model_dump_json(indent=2)
        key = keys.heal_attempt(attempt.category.value, stamp, keys.fingerprint(data))
        if key in self._read or self.store.exists(key):
            return
        self.store.put_bytes(key, data.encode())
        self._read[key] = attempt.model_copy(deep=True)

    def attempts(self, category: ErrorCategory | None = None) -> list[HealAttempt]:
        """Every readable attempt (of one category, or all), oldest first; an unreadable file is skipped."""
        prefix = f"{keys.HEAL_KB}/{category.value}" if category is not None else keys.HEAL_KB
        found = []
        for key in self.store.list(prefix):
            if not key.endswith(".json"):
                continue
            if key not in self._read:
                self._read[key] = self._load(key)
            attempt = self._read[key]
            if attempt is not None:
                found.append(attempt)
        return sorted(found, key=lambda a: (a.at or datetime.min.replace(tzinfo=UTC)).astimezone(UTC))

    def _load(self, key: str) -> HealAttempt | None:
        try:
            return HealAttempt.model_validate_json(self.store.get_bytes(key))
        except (StoreError, ValidationError, UnicodeDecodeError) as exc:
            log.warning("skipping unreadable heal knowledge %s: %s", key, str(exc).splitlines()[0] if str(exc) else exc)
            return None

    # -- the learning engine -----------------------------------------------------------------------------

    def choose_method(self, assessment: Assessment, healer: str, prior: HealMethod) -> HealMethod:
        """The method to ask ``healer`` for first on a failure of this kind.

        With no recorded outcome for (``assessment.category``, ``healer``) the decision tree's ``prior`` is the
        answer. Otherwise each method is a Beta-Bernoulli arm, Beta(1 + successes, 1 + failures), whose prior
        pseudo-counts carry the decision tree: the ``prior`` method starts with 2 pseudo-successes, every other
        method with 1 pseudo-failure (an untried method is presumed worse than the tree's pick, not a coin toss,
        so a method that measurably works is not drowned by optimism about the untried ones). One draw per arm;
        the highest wins, the cheaper method on a tie (update < patch < rewrite).

        Thompson sampling rather than UCB1: the decision tree fits in as a Beta prior instead of a tuned bonus;
        UCB1 plays every untried arm first, so it would ask for a costly ``rewrite`` just to measure it, while
        Thompson explores an arm only as often as it may be the best; and concurrent runs sampling the same
        counts spread their exploration instead of all making the same deterministic choice. The randomness is
        the injected ``rng``, so tests are deterministic.
        """
        tallies = _tallies(self.attempts(assessment.category)).get((assessment.category, healer))
        if not tallies:
            return prior
        best, best_draw = prior, -1.0
        for method in METHOD_ORDER:  # cheapest first: a later method must beat the draw strictly
            tally = tallies.get(method, _Tally())
            alpha = 1 + tally.successes + (PRIOR_SUCCESSES if method is prior else 0)
            beta = 1 + tally.failures + (0 if method is prior else OTHER_FAILURES)
            draw = self.rng.betavariate(alpha, beta)
            if draw > best_draw:
                best, best_draw = method, draw
        return best

    def learned_table(self) -> list[LearnedChoice]:
        """Per (category, healer, method) tried: attempts, successes, and what the engine now prefers.

        ``chosen`` is the method with the best smoothed success rate, (successes + 1) / (attempts + 2), among the
        methods tried for that (category, healer): the bandit's expectation without any one failure's prior.
        """
        rows = []
        for (category, healer), tallies in sorted(_tallies(self.attempts()).items()):
            chosen = _greedy(tallies)
            for method in METHOD_ORDER:
                tally = tallies.get(method)
                if tally and tally.attempts:
                    rows.append(LearnedChoice(category, healer, method, tally.attempts, tally.successes, chosen))
        return rows

    def learned_markdown(self) -> str:
        """The learned table as the flow publishes it (a Prefect markdown artifact)."""
        rows = self.learned_table()
        head = "# Learned repair methods\n\n"
        if not rows:
            return head + "No repair attempts recorded yet: the decision tree chooses every method.\n"
        lines = [
            "| Category | Healer | Method | Attempts | Successes | Success rate | Engine prefers |",
            "|---|---|---|---:|---:|---:|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r.category.value} | `{_cell(r.healer)}` | {r.method.value} | {r.attempts} | {r.successes} "
                f"| {r.success_rate:.0%} | {r.chosen.value} |"
            )
        return head + "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
