"""Hazards, not rule codes, in the engine (``bufferlint.hazards``): the engine computes
hazards, the catalog maps each to the one rule that reports it, and packs name a sink's
hazard by that rule's code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bufferlint
from bufferlint.catalog import RULES, rule_for
from bufferlint.hazards import Hazard
from bufferlint.packs import PackError, vocabulary_from_dict

ENGINE = Path(bufferlint.__file__).parent / "analysis"


def test_every_hazard_is_reported_by_exactly_one_rule() -> None:
    reporting = {hazard: [rule.code for rule in RULES.values() if rule.hazard is hazard] for hazard in Hazard}
    assert all(len(codes) == 1 for codes in reporting.values()), reporting
    for hazard, (code,) in reporting.items():
        assert rule_for(hazard) is RULES[code]


def test_the_engine_knows_no_rule_code() -> None:
    """Behaviour switches read hazards' properties; a code in the engine would make the
    next rule a judgement call on every branch again (issue 27)."""
    mentions = [
        f"{path.relative_to(ENGINE.parent)}:{number}"
        for path in sorted(ENGINE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bBL\d{3}\b", line)
    ]
    assert mentions == []


def test_hazards_order_as_declared() -> None:
    assert sorted(reversed(list(Hazard))) == list(Hazard)
    assert Hazard.ASYNC_READ_AFTER_ADVANCE < Hazard.HOST_READS_IN_FLIGHT
    with pytest.raises(TypeError):
        assert Hazard.KEPT_PAST_STEP < "BL003"


def _sink(rule: object) -> dict:
    return {"sinks": [{"call": [".enqueue"], "rule": rule}]}


def test_a_pack_sink_names_its_hazard_by_the_rule_code() -> None:
    assert vocabulary_from_dict(_sink("BL004"), "p.toml").sinks[0].hazard is Hazard.DEVICE_COPY_READS_HOST
    assert vocabulary_from_dict(_sink("BL001"), "p.toml").sinks[0].hazard is Hazard.ASYNC_READ_AFTER_ADVANCE
    no_rule = {"sinks": [{"call": [".enqueue"]}]}
    assert vocabulary_from_dict(no_rule, "p.toml").sinks[0].hazard is Hazard.ASYNC_READ_AFTER_ADVANCE


@pytest.mark.parametrize("rule", ["BL003", "BL002", "BL999", "bl004", ["BL001"]])
def test_a_pack_sink_rule_must_report_a_sink_hazard(rule: object) -> None:
    """Only rules whose hazard a sink can report (someone reads the value later)."""
    with pytest.raises(PackError, match=r"'rule' must be \"BL001\" \(task\) or \"BL004\" \(device copy\)"):
        vocabulary_from_dict(_sink(rule), "p.toml")
