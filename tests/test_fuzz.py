"""A short bounded fuzz run in every test run (the long run: ``scripts/fuzz.py``): generated
loaders (and hypothesmith's odd valid Python, when installed) through the analysis and the
fixer: no internal error, fixes that parse, and a second fix run that changes nothing."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fuzzing import check_program, compiles, programs


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(programs().filter(compiles))
def test_generated_programs(text: str) -> None:
    outcome = check_program(text)
    assert outcome.problems == [], text
