"""Findings in words: the engine reports facts (rule code, site, trace with the hazard at its
sink step, borrow kind) and each
rule's templates turn them into its message and trace notes, with the marker, copy method
and remedy of the kind of value that reached it."""

from __future__ import annotations

import dataclasses

from bufferlint.findings import AnalysisResult, Finding, TraceStep
from bufferlint.packs import BorrowKind, Vocabulary


def kind_of(finding: Finding) -> str:
    """The finding's borrow kind: the one it names (BL002: its guard's), else the kind of the
    producer its trace starts from."""
    if finding.kind:
        return finding.kind
    return next((step.fact[1] for step in finding.trace if step.fact[:1] == ("source",)), "")


def kind_markers(finding: Finding, vocab: Vocabulary) -> tuple[str, ...]:
    """The markers that identify the finding's kind of value; none when that cannot be told
    (several marked kinds and a finding that names none)."""
    kind = vocab.kind(kind_of(finding))
    if kind is not None and kind.markers:
        return kind.markers
    return tuple(vocab.markers) if len(vocab.markers) == 1 and not kind_of(finding) else ()


def render(result: AnalysisResult, vocab: Vocabulary) -> AnalysisResult:
    """``result`` with every finding's message and fact-carrying trace steps in words."""
    findings = [_render(finding, vocab) for finding in result.findings]
    return dataclasses.replace(result, findings=findings)


def _render(finding: Finding, vocab: Vocabulary) -> Finding:
    from bufferlint.catalog import RULES

    name = kind_of(finding)
    words = _kind_words(vocab.kind(name), kind_markers(finding, vocab) or tuple(sorted(vocab.markers)))
    rule = RULES[finding.rule]
    condition = _version_condition(finding, vocab.kind(name))
    message = finding.message or condition + rule.message.format(sink=finding.sink, **words)
    trace = tuple(_note(step, words) for step in finding.trace)
    return dataclasses.replace(finding, message=message, trace=trace, kind=name)


def _version_condition(finding: Finding, kind: BorrowKind | None) -> str:
    """For a producer that lends only in some versions of its library (or, for a finding
    with no producer such as BL002, a kind whose marked values are borrowed only in some):
    those versions and, first, the one-line fix that leaves them out
    (``runai-model-streamer>=0.17``)."""
    fact = next((step.fact for step in finding.trace if step.fact[:1] == ("source",)), ())
    if len(fact) >= 6:
        _, _, _, condition, admitted, floor = fact[:6]
    elif not fact and kind is not None and kind.condition:
        condition, admitted, floor = kind.condition, kind.admitted, kind.floor
    else:
        return ""
    fix = f", raise the floor: `{floor}`" if floor else ""  # no ";": the shim's comments cut there
    return f"{condition} only ({admitted}{fix}): "


def _note(step: TraceStep, words: dict[str, str]) -> TraceStep:
    from bufferlint.catalog import rule_for

    if step.fact[:1] == ("other-kinds",) and not step.note:
        _, name, kinds = step.fact
        checked = ", ".join(f"`{kind}`" for kind in kinds)
        return dataclasses.replace(step, note=f"`{name}` checks only the markers of kind {checked}, another kind's")
    if step.fact[:1] != ("sink",) or step.note:
        return step
    _, hazard, sink = step.fact
    return dataclasses.replace(step, note=rule_for(hazard).step_note.format(sink=sink, **words))


def _kind_words(kind: BorrowKind | None, markers: tuple[str, ...]) -> dict[str, str]:
    return {
        "marker": " or ".join(f"`{m}`" for m in markers) or "the borrowed-value marker",
        "copy": f"`{kind.copy_of('value')}`" if kind is not None and kind.copy else "a copy",
        "remedy": f" {kind.remedy}" if kind is not None and kind.remedy else "",
    }
