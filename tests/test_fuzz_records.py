"""Fuzzing the loader and the build: mutated small records either build or are refused with located diagnostics (exit 2
through cli.main), never another exception, never a hang. Bounded in examples; time per example is never a criterion."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzing import Hang, build, mutated_copy, problems_with


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                                     HealthCheck.too_slow])
@given(data=st.data(), count=st.integers(min_value=1, max_value=3))
def test_mutated_records_build_or_are_refused_with_located_diagnostics(tmp_path_factory, data, count):
    workdir = tmp_path_factory.mktemp("fuzz")

    def choose(n: int) -> int:
        return data.draw(st.integers(min_value=0, max_value=n - 1))

    mutations = mutated_copy(Path(workdir), choose, count=count)
    try:
        outcome = build(Path(workdir), seconds=120)
    except Hang as hang:  # bounded inputs: a build that does not return in minutes is a loop over input
        raise AssertionError(f"the build hung: {hang}") from None
    assert problems_with(outcome) == [], (mutations, outcome.stderr[:2000])
