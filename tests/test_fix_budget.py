"""Fix planning never holds a report up: a file nested past the planner's limit is not planned,
a file planning past its time budget is stopped, and each finding of theirs keeps ``fix: null``
with a ``fix_error`` that says why."""

from __future__ import annotations

import json
import time

import pytest

from bufferlint.fixes import budget
from conftest import run_cli, write

LOADER = '''import concurrent.futures

from runai_model_streamer import SafetensorsStreamer


def load(files, params):
    with SafetensorsStreamer() as streamer, concurrent.futures.ThreadPoolExecutor() as ex:
        streamer.stream_files(files)
        for name, t in streamer.get_tensors():
            ex.submit(params[name].copy_, t)
'''


def generated(terms: int) -> str:
    """The loader and a generated sum of ``terms`` terms (a table compiled into code)."""
    return LOADER + "\nTOTAL = " + " + ".join(["1"] * terms) + "\n"


def test_a_deeply_nested_file_is_not_planned_and_says_why():
    assert budget.too_deep(generated(10)) is None
    assert "more than 1000 levels deep" in budget.too_deep(generated(budget.MAX_NESTING + 10))


@pytest.mark.parametrize("terms", [1_500, 20_000])
def test_check_json_on_a_generated_file_keeps_the_finding_with_fix_error(tmp_path, terms):
    write(tmp_path, {"pyproject.toml": '[project]\nname = "p"\nversion = "0"\n', "m.py": generated(terms)})
    result = run_cli("check", "--no-cache", "--format", "json", "m.py", cwd=tmp_path)
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["rule"] == "BL001" and finding["fix"] is None
    assert finding["fix_error"].startswith("not planned: the file nests code more than 1000 levels deep")
    sarif = json.loads(run_cli("check", "--no-cache", "--format", "sarif", "m.py", cwd=tmp_path).stdout)
    notes = [n["message"]["text"] for run in sarif["runs"] for inv in run["invocations"]
             for n in inv.get("toolExecutionNotifications", [])]
    assert any(n.startswith("no fix for BL001: not planned") for n in notes), notes


def _slow_when_negative(job: int) -> int:
    if job < 0:
        time.sleep(30)
    return job * 10


def _exhausted(job: int, why: str) -> str:
    return why


@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_past_its_time_budget_is_stopped_and_the_others_are_planned(workers):
    started = time.monotonic()
    results = budget.plan_all([1, -1, 2, 3], _slow_when_negative, _exhausted, budget.Budget(per_file=0.5), workers)
    assert results == [10, "not planned: planning this file ran past its 0.5 s budget", 20, 30]
    assert time.monotonic() - started < 20  # the sleeping worker was killed, not waited for


def test_the_runs_budget_stops_everything_left():
    results = budget.plan_all([-1, -2, 4], _slow_when_negative, _exhausted, budget.Budget(per_file=10, total=0.5))
    assert results == ["not planned: the run's 0.5 s fix planning budget was spent"] * 3


def _broken(job: int) -> int:
    raise ValueError(f"planner bug on {job}")


def test_a_planner_bug_is_raised_as_if_it_had_run_here():
    with pytest.raises(ValueError, match="planner bug on 1"):
        budget.plan_all([1], _broken, _exhausted, budget.COMMAND)
