"""One exception hierarchy. Every message says what went wrong and what to do about it."""

from __future__ import annotations


class MendflowError(Exception):
    """Base of every error mendflow raises on purpose; the CLI prints it as one line and exits non-zero.

    Its exit code is sysexits' EX_UNAVAILABLE: something mendflow needs (the store, the launcher, the index, the
    model) failed, so there is no verdict; never a verdict's code (build's 1 is FAILED, run's 1 a regression).
    """

    exit_code = 69

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def one_line(self) -> str:
        text = str(self).replace("\n", " ").strip()
        return f"{text} ({self.hint})" if self.hint else text


class InputError(MendflowError):
    """The user gave something mendflow cannot use (a path, a commit, a file)."""

    exit_code = 2


class RepoNotFoundError(InputError):
    """The path or URL is not a git repository."""


class CommitNotFoundError(InputError):
    """The commit, branch or tag does not exist in the repository."""


class ConfigError(InputError):
    """A setting has a value mendflow cannot use."""


class TooLargeError(InputError):
    """Something a repository or a job handed over is past its size limit (snapshot, job output, log)."""


class ContractError(MendflowError):
    """A stage produced or received data that does not match its contract."""


class StoreError(MendflowError):
    """The artefact store failed to read or write."""


class StoreUnreachableError(StoreError):
    """The artefact store cannot be reached or refuses our credentials."""


class ArtefactNotFoundError(StoreError):
    """An artefact key is absent from the store."""


class LaunchError(MendflowError):
    """A job could not be started or watched."""


class CodeIndexError(MendflowError):
    """The code index failed (reading, parsing, storing or querying)."""


class LLMError(MendflowError):
    """The LLM endpoint failed or returned something unusable."""


class BudgetExceededError(LLMError):
    """The per-run LLM token budget is spent."""


class RunNotFinishedError(MendflowError):
    """A flow run crashed, was cancelled, failed without an outcome, or is still running past the wait."""

    exit_code = 5


class HealError(MendflowError):
    """A repair could not be made as asked (text not unique, a patch that does not apply, a refused path)."""
