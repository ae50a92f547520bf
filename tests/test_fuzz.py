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


# Found by the run above: one value handed over twice in a function gives two findings with
# one key; a round where only one of their fixes worked rejected both (the correct copy fix
# of `maybe_submit` included), so a second --fix run applied it: not idempotent.
TWICE_HANDED_OVER = '''\
import concurrent.futures
from streamloader.executor_utils import maybe_submit, should_async_load
from streamloader.weights import stream_safetensors

kept = []


async def load(files, params, futures):
    with concurrent.futures.ThreadPoolExecutor() as executor:
        for name, w in stream_safetensors(files):
            try:
                executor.submit(params[name].copy_, w)
            except Exception:
                maybe_submit(executor, futures, should_async_load(w), params[name].copy_, w)
            kept.append(w)
            kept.append(w)
'''


def test_findings_sharing_a_key_are_fixed_in_one_run() -> None:
    outcome = check_program(TWICE_HANDED_OVER)
    assert outcome.problems == [] and outcome.findings == 0 and outcome.fixed_files == 1
