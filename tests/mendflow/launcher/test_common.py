"""What every launcher promises (``mendflow/launcher/base.py``), run against each backend by the ``launcher``
fixture (``conftest.py``): the same job, the same assertions; only how the job is played differs."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from mendflow.launcher.base import JobState
from tests.mendflow.launcher.conftest import Job, LauncherCase

FAIL_LINE = "E   assert 1 == 2"
SECRET = "parent-secret"


def test_a_job_that_succeeds_is_succeeded_with_exit_0(launcher: LauncherCase) -> None:
    result = launcher.run(Job())
    assert (result.state, result.exit_code) == (JobState.SUCCEEDED, 0), result.reason


def test_a_non_zero_exit_is_failed_with_its_code(launcher: LauncherCase) -> None:
    result = launcher.run(Job(prints=(FAIL_LINE,), exit_code=3))
    assert (result.state, result.exit_code) == (JobState.FAILED, 3) and "code 3" in str(result.reason)


def test_a_failed_job_keeps_the_tail_of_its_output(launcher: LauncherCase) -> None:
    assert FAIL_LINE in launcher.run(Job(prints=("collecting", FAIL_LINE), exit_code=1)).log_tail


def test_a_job_past_its_timeout_is_timed_out(launcher: LauncherCase) -> None:
    result = launcher.run(Job(hangs=True, timeout_sec=2))
    assert result.state is JobState.TIMED_OUT, result.reason


def test_a_job_over_its_memory_limit_is_oom_killed_naming_the_limit_and_its_setting(launcher: LauncherCase) -> None:
    result = launcher.run(Job(exhausts_memory=True, memory_limit_mb=256))
    assert result.state is JobState.OOM_KILLED, result.reason
    assert "256" in str(result.reason) and "MENDFLOW_SANDBOX__MEMORY_LIMIT_MB" in str(result.reason)


def test_a_job_that_cannot_start_is_an_error_naming_what(launcher: LauncherCase) -> None:
    result = launcher.run(Job(cannot_start=True))
    assert result.state is JobState.ERROR
    assert launcher.unstartable in str(result.reason)


def test_outputs_the_job_wrote_are_delivered_and_listed(launcher: LauncherCase) -> None:
    result = launcher.run(Job(writes={"report.json": "{}"}, outputs=("report.json",)))
    assert result.state is JobState.SUCCEEDED, result.reason
    assert result.outputs == {"report.json": launcher.output_url("report.json")}


def test_a_failed_job_still_delivers_what_it_wrote(launcher: LauncherCase) -> None:
    # A failing build's report is the result: it says which tests failed.
    result = launcher.run(Job(exit_code=1, writes={"report.json": "{}"}, outputs=("report.json",)))
    assert result.state is JobState.FAILED
    assert result.outputs == {"report.json": launcher.output_url("report.json")}


def test_an_output_the_job_did_not_write_is_not_listed(launcher: LauncherCase) -> None:
    job = Job(exit_code=1, writes={"report.json": "{}"}, outputs=("report.json", "coverage.json"))
    assert list(launcher.run(job).outputs) == ["report.json"]


def test_output_lines_reach_the_callback_in_order(launcher: LauncherCase) -> None:
    if launcher.no_output_stream:
        pytest.skip(launcher.no_output_stream)
    lines: list[str] = []
    result = launcher.run(Job(prints=("one", "two", "three")), lines.append)
    assert result.state is JobState.SUCCEEDED, result.reason
    assert lines == ["one", "two", "three"]


def test_a_callback_that_raises_changes_nothing_for_the_job(launcher: LauncherCase) -> None:
    if launcher.no_output_stream:
        pytest.skip(launcher.no_output_stream)
    seen: list[str] = []

    def broken_display(line: str) -> None:
        seen.append(line)
        raise RuntimeError("the display broke")

    result = launcher.run(Job(prints=("one", "two"), writes={"r.json": "{}"}, outputs=("r.json",)), broken_display)
    assert (result.state, list(result.outputs), seen) == (JobState.SUCCEEDED, ["r.json"], ["one", "two"])


def test_the_callers_credentials_do_not_reach_the_job(launcher: LauncherCase, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "PREFECT_API_KEY", "MENDFLOW_S3__SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, SECRET)
    env = launcher.job_env(Job(env={"FOO": "bar"}))
    assert env["FOO"] == "bar" and SECRET not in env.values()


def test_credentials_named_in_the_spec_do_not_reach_the_job(launcher: LauncherCase) -> None:
    passed = {"GITHUB_TOKEN": "t", "OPENAI_API_KEY": "k", "AWS_ACCESS_KEY_ID": "a", "DB_PASSWORD": "p"}
    env = launcher.job_env(Job(env={**passed, "FOO": "bar"}))
    assert [name for name in passed if name in env] == []


def test_an_interrupted_run_is_cleaned_up_before_the_interrupt_propagates(launcher: LauncherCase) -> None:
    timer = threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            launcher.run(Job(hangs=True, timeout_sec=120))
    finally:
        timer.cancel()
    assert launcher.leftovers() == []


def test_nothing_of_a_job_is_left_once_it_returns(launcher: LauncherCase) -> None:
    for job in (Job(), Job(exit_code=3), Job(hangs=True, timeout_sec=2), Job(exhausts_memory=True)):
        launcher.run(job)
    assert launcher.leftovers() == []
