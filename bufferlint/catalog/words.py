"""Findings in words: the engine reports facts (rule code, site, trace with the hazard at its
sink step, borrow kind) and each
rule's templates turn them into its message and trace notes, with the marker, copy method
and remedy of the kind of value that reached it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from bufferlint.findings import AnalysisResult, Finding, TraceStep
from bufferlint.packs import BorrowKind, Vocabulary

if TYPE_CHECKING:
    from bufferlint.catalog.rule import Rule


def kind_of(finding: Finding) -> str:
    """The finding's borrow kind: the one it names (BL002: its guard's), else the kind of the
    producer its trace starts from."""
    if finding.kind:
        return finding.kind
    fact = source_fact(finding)
    return fact[1] if fact else ""


def kind_for(finding: Finding, vocab: Vocabulary) -> BorrowKind | None:
    """The kind whose copy and remedy fit the finding's values: its kind; None for values of
    a producer whose kind neither a pack nor its annotations name (its words then name no
    library, and no copy is offered). A finding with no producer (BL002) and no kind is of
    the only marked kind, if there is one."""
    name = kind_of(finding)
    made = _view_kind(finding, vocab)
    if not name and source_fact(finding):
        return made
    kind = vocab.kind(name)
    if kind is not None and made is not None and made.copy != kind.copy:
        return dataclasses.replace(kind, copy=made.copy)  # `np.frombuffer(buf)` copies as NumPy does
    return kind


def _view_kind(finding: Finding, vocab: Vocabulary) -> BorrowKind | None:
    """The kind of the view the finding's value is, when a call a kind names made it from
    the producer's value (``np.frombuffer(buf)``, a ``("view", kind)`` step): its copy is
    the one that keeps the value what it is."""
    made = next((step.fact[1] for step in finding.trace if step.fact[:1] == ("view",)), "")
    return vocab.kinds.get(made) if made else None


def kind_markers(finding: Finding, vocab: Vocabulary) -> tuple[str, ...]:
    """The markers that identify the finding's kind of value; none when that cannot be told
    (several marked kinds and a finding that names none)."""
    kind = kind_for(finding, vocab)
    if kind is not None and kind.markers:
        return kind.markers
    return tuple(vocab.markers) if len(vocab.markers) == 1 and not kind_of(finding) else ()


def render(result: AnalysisResult, vocab: Vocabulary) -> AnalysisResult:
    """``result`` with every finding's message and fact-carrying trace steps in words."""
    findings = [_render(finding, vocab) for finding in result.findings]
    covered = [(_render(finding, vocab), spans) for finding, spans in result.covered]
    return dataclasses.replace(result, findings=findings, covered=covered)


def _render(finding: Finding, vocab: Vocabulary) -> Finding:
    from bufferlint.catalog import RULES

    name = kind_of(finding)
    kind = kind_for(finding, vocab)
    words = _kind_words(kind, kind_markers(finding, vocab) or tuple(sorted(vocab.markers)))
    rule = RULES[finding.rule]
    condition = _version_condition(finding, kind)
    template, _ = rule.wording(sink_form(finding))
    message = finding.message or condition + template.format(sink=finding.sink, **words)
    trace = tuple(_note(step, words) for step in finding.trace)
    source_fix = _source_fix(finding, rule, kind, words)
    return dataclasses.replace(finding, message=message, trace=trace, kind=name, source_fix=source_fix)


def _source_fix(finding: Finding, rule: Rule, kind: BorrowKind | None, words: dict[str, str]) -> str:
    """The change at the finding's producer that removes every finding from it, most direct
    first: the library's floor when only older versions lend, the kind's remedy (its
    producer handing out owned values), a copy where the producer hands each value out (or
    the rule's own ``source_fix``). "" for a finding with no producer in its trace (BL002)."""
    fact = source_fact(finding)
    if not fact:
        return ""
    floor = fact[5] if len(fact) >= 6 else ""
    fixes = [f"raise the floor: `{floor}`"] if floor else []
    if rule.source_fix:
        fixes.append(rule.source_fix.format(sink=finding.sink, **words))
    else:
        if kind is not None and kind.remedy:
            fixes.append(kind.remedy.removeprefix("or "))  # written to follow BL003's message
        fixes.append(f"copy each value where the producer hands it out ({words['copy']})")
    return "; or ".join(fixes)


def source_fact(finding: Finding) -> tuple[Any, ...]:
    """The fact of the producer's step in the finding's trace: ("source", kind, shape, and
    for a version-conditioned producer its condition, admitted versions and floor); ()."""
    return next((step.fact for step in finding.trace if step.fact[:1] == ("source",)), ())


def version_condition(fact: tuple[Any, ...]) -> str:
    """A version-conditioned producer's condition as a message starts with it: under which
    versions it lends, what the project admits, and the one-line fix that rules them out."""
    _, _, _, condition, admitted, floor = fact[:6]
    # no ";": the shim's comments cut there; several floors: raising any one of them does
    fix = f", raise the floor: {' or '.join(f'`{f}`' for f in floor.split(' or '))}" if floor else ""
    return f"{condition} only ({admitted}{fix}): "


def _version_condition(finding: Finding, kind: BorrowKind | None) -> str:
    """For a producer that lends only in some versions of its library (or, for a finding
    with no producer such as BL002, a kind whose marked values are borrowed only in some):
    those versions and, first, the one-line fix that leaves them out
    (``runai-model-streamer>=0.17``)."""
    fact = source_fact(finding)
    if len(fact) >= 6:
        return version_condition(fact)
    if not fact and kind is not None and kind.condition:
        return version_condition(("", "", "", kind.condition, kind.admitted, kind.floor))
    return ""


def _note(step: TraceStep, words: dict[str, str]) -> TraceStep:
    from bufferlint.catalog import rule_for

    if step.fact[:1] == ("other-kinds",) and not step.note:
        _, name, kinds = step.fact
        checked = ", ".join(f"`{kind}`" for kind in kinds)
        return dataclasses.replace(step, note=f"`{name}` checks only the markers of kind {checked}, another kind's")
    if step.fact[:1] != ("sink",) or step.note:
        return step
    _, hazard, sink, *form = step.fact
    _, template = rule_for(hazard).wording(form[0] if form else "")
    return dataclasses.replace(step, note=template.format(sink=sink, **words))


def sink_form(finding: Finding) -> str:
    """The form of the hazard the engine named at the finding's sink step ("" for none):
    a view read after an advance, handed back after its producer moved on, ..."""
    for step in reversed(finding.trace):
        if step.fact[:1] == ("sink",):
            return step.fact[3] if len(step.fact) > 3 else ""
    return ""


def _kind_words(kind: BorrowKind | None, markers: tuple[str, ...]) -> dict[str, str]:
    return {
        "marker": " or ".join(f"`{m}`" for m in markers) or "the borrowed-value marker",
        "copy": f"`{kind.copy_of('value')}`" if kind is not None and kind.copy else "with its library's copy method",
        "remedy": f" {kind.remedy}" if kind is not None and kind.remedy else "",
    }
