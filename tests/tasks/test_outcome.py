"""Reading a pipeline run's result from its final state."""

from __future__ import annotations

import pytest
from prefect.states import Completed

from mendflow.errors import ContractError
from tasks.outcome import pipeline_result


def test_a_final_state_without_its_result_is_one_clear_error() -> None:
    # A state read from the API whose result was never persisted (its storage could not be written).
    with pytest.raises(ContractError, match="pipeline run ended Merged but its result cannot be read here"):
        pipeline_result(Completed(name="Merged"))
