"""Early cut-off: an edit that changes what a function tells its callers, replayed up the
call graph until nothing changes any more (Salsa's red-green, on the recorded analyses).

Why: ``replay.replay_function`` accepts an edit only when the edited function does
exactly what it did. The edits commits make usually change something: ``self._kept =
loaded_weight`` in a model's ``load_weights`` adds a field store to its summary (its callers
now put the borrowed weight there) and a finding. The rest of the run is still the recorded
one when:

* every analysis of the edited functions, given what it read, writes what it wrote (a store
  into an attribute nothing reads is not a write others see: ``replay.seal``), calls and
  asks for the same functions, and changes its summary at the same analyses as before (so
  the fixpoint visits the same functions in the same order; if not, the fixpoint's end
  state is replayed instead: ``_CutOff``'s ``settled``);
* every analysis that read a changed summary (``RunFacts.readers``), replayed with the new
  summary in place of the old one, does the same in turn: a reader whose summary changes
  too is a changed function, and its readers are replayed (bounded: ``MAX_REPLAYED``);
* nothing the file selection, the guards' judgement or the limits read changed
  (``_same_effects``).

Then only the outcomes of the replayed functions changed, and the findings they take part
in are computed again: the routes into each site they hold (``program.routes_to_sites``,
from the reaches of those sites only, through the recorded call edges into them,
``RunFacts.incoming``) and their own findings, from every function whose outcome holds the
site (``RunFacts.origins``). The check runs in the lines of the analysed version (the edited
functions renumbered into it: ``edits.renumber``), where the logs' answers hold; the new
findings come from the same analyses run again in the edited file's own lines, whose
answers must not name a position in that file (``replay.ReplayProgram``'s ``watch``).
Anything else gives up (``None``): the project is analysed afresh.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Container, Mapping, Sequence

from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, Summary, changes_returned_object_only
from bufferlint.analysis.frontend.index import FunctionInfo
from bufferlint.analysis.incremental.codec import Unencodable, digest
from bufferlint.analysis.incremental.replay import AnalysisLog, ModuleSource, NotRecorded, Watch, outcome_digest, replay_runs, step_facts
from bufferlint.analysis.whole.program import (
    MAX_ANALYSES_PER_FUNCTION, dedupe, direct_routes, findings_of, returns_borrowed, routes_to_sites,
)
from bufferlint.findings import PASSED_GUARD, Span

MAX_REPLAYED = 96  # functions replayed before giving up (the project is analysed afresh)


class GiveUp(Exception):
    """The edit's effects reach beyond what the recorded analyses can answer."""


class OtherOrder(GiveUp):
    """The edited run would visit the functions in another order than the recorded one."""


@dataclass(frozen=True)
class RunFacts:
    """What the recorded run knew beyond each analysis's log (``cached``'s record)."""

    observed: frozenset[str]  # attributes whose stores someone sees (``replay.seal``)
    readers: Mapping[str, Sequence[str]]  # function -> the functions whose analyses read its summary
    incoming: Mapping[str, Sequence[str]]  # function -> the functions with a call edge into it
    origins: Mapping[tuple, Sequence[str]]  # finding key -> the functions whose outcomes hold it
    covered: frozenset[str]  # ``ProjectAnalysis.covered_by_callers``
    attached_asked: frozenset[str]  # attribute names some analysis asked the stored callables of
    fields_asked: frozenset[str]  # attribute names some analysis asked the declared classes or objects of
    reported: Container[Path]  # the files reported (the record's analysis reported them all)


@dataclass
class FindingsDelta:
    """The recorded findings to drop (by rule and span, in the analysed version's lines)
    and those to add (in the edited files' own lines)."""

    removed: set = field(default_factory=set)
    added: list = field(default_factory=list)


@dataclass
class Phases:
    """How to reach a function in each version: ``old`` (the analysed version), ``check``
    (the edited functions renumbered into it), ``new`` (the edited file as it is)."""

    modules: Mapping[str, ModuleSource]  # phase -> module source
    info: Callable[[str, str], FunctionInfo | None]  # (phase, function) -> its definition there
    logs: Callable[[str], list[AnalysisLog] | None]
    watch: Watch  # the edited file: its analysed lines that moved or changed


def key_of(hazard, span: Span, key: Callable[[Path], str]) -> tuple:
    """A finding's key as the record stores it (``RunFacts.origins``)."""
    return (hazard.name, key(span.path), span.line, span.column, span.end_line, span.end_column)


def cut_off(changed: set[str], phases: Phases, facts: RunFacts, vocab, raw_vocab, path_key: Callable[[Path], str],
            edited: str, backward: Mapping[int, int]) -> FindingsDelta | None:
    """The findings' change if the edit of ``changed`` (in the file keyed ``edited``) stops
    within the replayed functions (None: give up). ``backward``: the analysed version's
    lines -> the edited version's that hold the very same text."""
    for settled in (False, True):
        try:
            return _CutOff(phases, facts, vocab, raw_vocab, path_key, edited, backward, settled).run(changed)
        except OtherOrder:
            continue  # the fixpoint's end state may still be reached from the recorded one
        except (GiveUp, NotRecorded, Unencodable, RecursionError):
            return None
    return None


class _CutOff:
    """``settled``: replay each function's last analysis only, with the final summaries in
    place (``Versions.settled``), instead of the recorded trajectory. The fixpoint ends
    when every function's last analysis read what the others ended with, so the edited
    run's outcomes are those last analyses given the edited run's final summaries, in
    whatever order it reached them; that end state is the one computed here from the
    recorded one unless a replayed function reads its own summary through others while a
    changed summary lost a fact (``_no_replayed_cycle``: a value that fed itself through
    a cycle could stay after the edit removed where it came from, which a run from
    scratch would not keep)."""

    def __init__(self, phases: Phases, facts: RunFacts, vocab, raw_vocab, path_key, edited: str,
                 backward: Mapping[int, int], settled: bool = False) -> None:
        self.phases, self.facts, self.vocab, self.raw_vocab = phases, facts, vocab, raw_vocab
        self.settled = settled
        self.path_key, self.edited = path_key, edited
        self.ahead_lines = dict(backward)  # analysed line -> edited line, kept lines only
        self.back_lines = {new: old for old, new in backward.items()}
        self.old: dict[str, list] = {}  # function -> its recorded analyses' outcomes
        self.checked: dict[str, list] = {}  # function -> its analyses' outcomes after the edit (check lines)
        self.renamed: dict[str, Versions] = {}  # changed summaries (check lines)
        self.moved: dict[str, Versions] = {}  # the same, in the edited file's lines
        self.final_new: dict[str, object] = {}  # function -> its last outcome in the edited file's lines

    # -- the check: the recorded trajectory, with changed summaries in place -------------

    def run(self, changed: set[str]) -> FindingsDelta:
        todo = sorted(changed)
        queued = set(todo)
        replays = 0
        while todo:
            qualname = todo.pop(0)
            queued.discard(qualname)
            replays += 1
            if replays > MAX_REPLAYED:
                raise GiveUp("too many functions replayed")
            if self._check(qualname):
                for reader in self.facts.readers.get(qualname, ()):
                    if len(self.phases.logs(reader) or ()) + self._extra_analyses(reader) >= MAX_ANALYSES_PER_FUNCTION:
                        raise GiveUp(f"{reader} may be analysed past the cap")
                    if reader not in queued:
                        todo.append(reader)
                        queued.add(reader)
        if self.settled:
            self._no_replayed_cycle()
        differs = sorted(q for q in self.checked if self._differs(q))
        return self._findings(differs) if differs else FindingsDelta()

    def _replay(self, phase: str, qualname: str, substitute: dict | None, last_only: bool = False) -> list:
        info = self.phases.info(phase, qualname)
        logs = self._replayed_logs(qualname)
        if info is None or not logs:
            raise GiveUp(f"no {phase} definition or log for {qualname}")
        if last_only:
            logs = logs[-1:]
        watch = self.phases.watch if phase == "new" else None
        runs = replay_runs(info, logs, self.vocab, self.raw_vocab, self.phases.modules[phase], self.facts.observed,
                           None if substitute is None else _substituting(substitute), watch)
        if runs is None:
            raise GiveUp(f"{qualname} did not replay")
        return runs

    def _replayed_logs(self, qualname: str) -> list[AnalysisLog]:
        """The recorded analyses this mode replays: all of them, or the last one (``settled``)."""
        logs = self.phases.logs(qualname) or []
        return logs[-1:] if self.settled else logs

    def _check(self, qualname: str) -> bool:
        """Replay ``qualname`` with the changed summaries known so far; True when its own
        summary's new versions are news (its readers must be replayed)."""
        logs = self._replayed_logs(qualname)
        if qualname not in self.old:
            old = self._replay("old", qualname, None)
            for (outcome, same, _), log in zip(old, logs):
                if not same or digest(step_facts(outcome)) != log.step:
                    raise GiveUp(f"{qualname}: the recorded analysis does not replay")
            if logs[-1].final is None or outcome_digest(old[-1][0]) != logs[-1].final:
                raise GiveUp(f"{qualname}: the recorded outcome does not replay")
            self.old[qualname] = [outcome for outcome, _, _ in old]
        new = self._replay("check", qualname, self.renamed)
        if not all(same for _, same, _ in new):
            raise GiveUp(f"{qualname} writes otherwise")
        outcomes = [outcome for outcome, _, _ in new]
        _same_effects(qualname, self.old[qualname], outcomes)
        self.checked[qualname] = outcomes
        renamed = _changed_summaries(self.old[qualname], outcomes, logs, self.settled)
        before = self.renamed.get(qualname, NO_CHANGE)
        self.renamed[qualname] = renamed
        return renamed.signature() != before.signature()

    def _extra_analyses(self, reader: str) -> int:
        """How many more analyses the edited run may give ``reader`` than the recorded one:
        none on the recorded trajectory; otherwise one if it reads a changed summary. The
        changed functions read no cycle (``_no_replayed_cycle``) and the fixpoint analyses
        a deferred caller after the deferred callees it waits for
        (``Program._callees_first``), so their changes reach it together. (An argument from
        the scheduler, not a proof: the cache's differential test is what checks it.)"""
        if not self.settled:
            return 0
        return int(any(versions.entries and reader in self.facts.readers.get(qualname, ())
                       for qualname, versions in self.renamed.items()))

    def _no_replayed_cycle(self) -> None:
        """A replayed function that reads its own summary, directly or through the readers
        of readers (a cycle of the recorded run's reads), is fine only when every changed
        summary only grew (``_only_grew``): the recorded end state is then below the edited
        run's, and going up from it reaches the same least fixpoint. A fact the edit took
        away could otherwise go on feeding itself around the cycle."""
        if all(_only_grew(self.old[q][-1].summary, self.checked[q][-1].summary) for q in self.checked):
            return
        readers = self.facts.readers
        for start in sorted(self.checked):
            seen: set[str] = set()
            todo = list(readers.get(start, ()))
            while todo:
                qualname = todo.pop()
                if qualname == start:
                    raise GiveUp(f"{start} reads its own summary through a cycle")
                if qualname not in seen:
                    seen.add(qualname)
                    todo.extend(readers.get(qualname, ()))

    def _differs(self, qualname: str) -> bool:
        """Its last outcome changed; its call edges must not have (the routes of the sites it
        does not hold go through them, and are kept as recorded)."""
        old, new = self.old[qualname][-1], self.checked[qualname][-1]
        if outcome_digest(old) == outcome_digest(new):
            return False
        if digest(old.edges) != digest(new.edges):
            raise GiveUp(f"{qualname}: its call edges changed")
        return True

    # -- the findings: the changed outcomes in the edited file's lines ---------------------

    def _new_outcomes(self) -> None:
        """Every replayed function's analyses in the edited file's own lines, in the order
        they were checked (callees whose summary changed first), with the changed summaries
        in those lines too (repeated until they settle)."""
        for _ in range(len(self.checked) + 1):
            settled = True
            for qualname in list(self.checked):
                runs = self._replay("new", qualname, self.moved)
                if len(runs) != len(self.checked[qualname]) or not all(count for _, _, count in runs):
                    raise GiveUp(f"{qualname} replays otherwise in the edited lines")
                outcomes = [outcome for outcome, _, _ in runs]
                self.final_new[qualname] = outcomes[-1]
                moved = (_changed_summaries(self.old[qualname], outcomes, self._replayed_logs(qualname), self.settled)
                         if self.renamed.get(qualname, NO_CHANGE).entries else NO_CHANGE)
                if moved.signature() != self.moved.get(qualname, NO_CHANGE).signature():
                    self.moved[qualname] = moved
                    settled = False
            if settled:
                return
        raise GiveUp("the changed summaries do not settle")

    def _final_new(self, qualname: str):
        """A function's last outcome in the edited file's lines (replayed unchanged when it
        was not replayed for the edit)."""
        if qualname not in self.final_new:
            runs = self._replay("new", qualname, None, last_only=True)
            if not runs[0][2]:
                raise GiveUp(f"{qualname} replays otherwise")
            self.final_new[qualname] = runs[0][0]
        return self.final_new[qualname]

    def _findings(self, differs: list[str]) -> FindingsDelta:
        """The findings at every site a changed outcome holds (before or after the edit),
        computed again from every function holding one of those sites."""
        self._new_outcomes()
        for qualname in differs:
            if any(_decides_by_callers(outcome) for outcome in (self.old[qualname][-1], self._final_new(qualname))):
                raise GiveUp(f"{qualname}: a finding decided by the guards its callers pass, or such a call")
        key = self.path_key
        before = set()  # the sites, in the analysed version's lines
        for qualname in differs:
            before |= _keys(self.old[qualname][-1], key)
        sites = set()  # the sites, in the edited file's lines
        for qualname in differs:
            sites |= _keys(self.final_new[qualname], key)
        origins = set(differs)
        while True:
            before |= {old for old in map(self._back, sites) if old is not None}
            sites |= {new for new in map(self._ahead, before) if new is not None}
            holders = set(origins).union(*(self.facts.origins.get(old, ()) for old in before))
            if len(holders) > MAX_REPLAYED:
                raise GiveUp("too many functions hold the sites")
            # A holder's site on an edited line has no recorded key: it is one of these too.
            held = {k for q in holders for k in _keys(self._final_new(q), key)
                    if self._back(k) is None or self._back(k) in before}
            if holders == origins and held <= sites:
                break
            origins, sites = holders, sites | held
        sited: dict[str, dict] = {}
        routes: dict[tuple, dict] = {}
        for qualname in sorted(origins):
            outcome = self._final_new(qualname)
            reaches = {r: r for r in outcome.sited if (r.hazard.name,) + _span_key(r.site.span, key) in sites}
            if reaches:
                sited[qualname] = reaches
            direct: dict = {}
            direct_routes(direct, qualname, outcome, self.facts.covered)
            for (hazard, span), traces in direct.items():
                if (hazard.name,) + _span_key(span, key) in sites:
                    routes.setdefault((hazard, span), {}).update(traces)
        incoming_memo: dict[str, list] = {}

        def incoming(callee: str) -> list:
            if callee not in incoming_memo:
                callers = self.facts.incoming.get(callee, ())
                if len(callers) > MAX_REPLAYED:
                    raise GiveUp(f"{callee} has too many callers")
                incoming_memo[callee] = [(caller, edge) for caller in callers
                                         for edge in self._final_new(caller).edges if edge.callee == callee]
            return incoming_memo[callee]

        def capped(_text: str) -> None:
            raise GiveUp("a route hit the conditions limit")

        for (hazard, site), traces in routes_to_sites(sited, incoming, capped).items():
            for trace in traces:
                routes.setdefault((hazard, site.span), {})[dedupe(trace)] = site
        return FindingsDelta(removed=before, added=findings_of(routes, self.facts.reported))

    def _back(self, new_key: tuple) -> tuple | None:
        """A key in the edited lines -> the analysed version's (None: on a changed line)."""
        return self._shift_key(new_key, self.back_lines)

    def _ahead(self, old_key: tuple) -> tuple | None:
        """A key in the analysed version's lines -> the edited version's (None: gone)."""
        return self._shift_key(old_key, self.ahead_lines)

    def _shift_key(self, key: tuple, lines: Mapping[int, int]) -> tuple | None:
        hazard, path, line, column, end_line, end_column = key
        if path != self.edited:
            return key
        first, last = lines.get(line), lines.get(end_line)
        if first is None or last is None:
            return None
        return (hazard, path, first, column, last, end_column)

def _span_key(span: Span, key: Callable[[Path], str]) -> tuple:
    return (key(span.path), span.line, span.column, span.end_line, span.end_column)


def _keys(outcome, key: Callable[[Path], str]) -> set:
    """The finding keys an outcome holds: its own findings' and its reaches' sites."""
    out = {(hazard.name,) + _span_key(site.span, key) for hazard, site in outcome.findings}
    out |= {(reach.hazard.name,) + _span_key(reach.site.span, key) for reach in outcome.sited}
    return out


@dataclass(frozen=True)
class Versions:
    """A function's summaries after the edit, per recorded analysis: (its place in the run,
    the recorded summary's digest, the new summary). ``by_time``: a reader gets the new
    summary of the function's last analysis before its own (the trajectory is the recorded
    one); otherwise the new version of whichever recorded summary it read (the first
    analysis's exception of ``_changed_summaries``)."""

    entries: tuple[tuple[int, bytes, Summary], ...] = ()
    by_time: bool = True
    settled: bool = False  # one entry: the final summary; a reader must have read the recorded final one
    # ``digest``'s memo for the recorded answers, which are decoded once per cut-off and asked
    # about by every replay of every reader (never changed: they are recorded reads)
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def signature(self) -> list[tuple[int, bytes, bytes]]:
        return [(seq, old, digest(new)) for seq, old, new in self.entries]

    def answer(self, qualname: str, answer, reader: int):
        """The new summary for a reader (at place ``reader``) that was given ``answer``."""
        recorded = digest(answer, self.memo)
        if self.settled:
            if recorded != self.entries[-1][1]:
                raise NotRecorded(("summary", qualname))  # a read the fixpoint did not end with
            return self.entries[-1][2]
        if not self.by_time:
            for _, old, new in self.entries:
                if old == recorded:
                    return new
            if answer == EMPTY_SUMMARY and recorded == digest(EMPTY_SUMMARY):
                return answer  # read before the function's first analysis
            raise NotRecorded(("summary", qualname))
        if reader < 0:
            raise NotRecorded(("summary", qualname))
        before = [entry for entry in self.entries if entry[0] < reader]
        if not before:
            if recorded != digest(EMPTY_SUMMARY):
                raise NotRecorded(("summary", qualname))
            return answer  # read before the function's first analysis
        _, old, new = before[-1]
        if old != recorded:
            raise NotRecorded(("summary", qualname))
        return new


NO_CHANGE = Versions()


def _substituting(renamed: dict[str, Versions]) -> Callable[[str, object, int], object]:
    """A ``summary`` answer as the edited run gives it (``Versions.answer``)."""
    def substitute(qualname: str, answer, reader: int):
        versions = renamed.get(qualname)
        if not versions or not versions.entries:
            return answer
        return versions.answer(qualname, answer, reader)
    return substitute


def _changed_summaries(old: list, new: list, logs: Sequence[AnalysisLog], settled: bool = False) -> Versions:
    """The new summaries per analysis, if any summary differs (``NO_CHANGE`` if none).
    ``settled``: the last analyses only (``_CutOff``), read as the final summary.

    The fixpoint re-analyses a function's readers after each analysis that changed its
    summary (only those using its value when nothing else changed and nothing borrowed is
    in it: ``_change_kind``), so the changes, of the same kind, must come at the same
    analyses, with two exceptions:

    * at an analysis when every caller was already queued (``AnalysisLog.waiting``), a
      change queues nothing: the summary may start or stop changing there (a store into a
      field added to a loader that the loaders calling it wait to re-read anyway);
    * a summary that never changed after the first analysis (an empty one, typically:
      nothing borrowed reached the function's stores before the edit) and now changes there
      once. Then the edited run analyses its readers once more at the end; their replays
      with the new summary in place of every answer they got stand for that last analysis,
      and must do what their recorded ones did."""
    entries = tuple((log.seq, digest(was.summary), now.summary) for was, now, log in zip(old, new, logs))
    if all(digest(now) == before for _, before, now in entries):
        return NO_CHANGE
    if settled:
        return Versions(entries[-1:], by_time=False, settled=True)
    same_pattern = True
    before_old, before_new = EMPTY_SUMMARY, EMPTY_SUMMARY
    for was, now, log in zip(old, new, logs):
        if _change_kind(before_old, was.summary) != _change_kind(before_new, now.summary) \
                and not (log.waiting and _queues_only(was, now)):
            same_pattern = False
        before_old, before_new = was.summary, now.summary
    if same_pattern:
        return Versions(entries)
    first_old, first_new = digest(old[0].summary), digest(new[0].summary)
    if any(digest(was.summary) != first_old for was in old) or any(digest(now.summary) != first_new for now in new):
        raise OtherOrder("a summary changes at other analyses")
    return Versions(entries, by_time=False)


_MAY_FACTS = ("sinks", "futures", "field_stores", "calls")  # what a summary says may happen: more is a larger summary


def _only_grew(old: Summary, new: Summary) -> bool:
    """``new`` says all ``old`` says and more of what may happen, nothing else changed."""
    return (all(getattr(old, name) <= getattr(new, name) for name in _MAY_FACTS)
            and all(getattr(old, f.name) == getattr(new, f.name) for f in fields(Summary) if f.name not in _MAY_FACTS))


def _change_kind(before: Summary, after: Summary) -> int:
    """0: no change; 1: a change queuing only the callers that use the returned value
    (``summaries.changes_returned_object_only``); 2: one queuing every caller."""
    if after == before:
        return 0
    return 1 if changes_returned_object_only(before, after) else 2


def _queues_only(was, now) -> bool:
    """A change of this summary does nothing but queue the callers (it asks no function
    more for the file selection: ``Program._calls_a_callee_word``)."""
    a, b = was.summary, now.summary
    return not (a.advances or a.synchronizes or a.enters_synchronized or b.advances or b.synchronizes or b.enters_synchronized)


def _same_effects(qualname: str, old: list, new: list) -> None:
    """What the fixpoint and the file selection read of each analysis besides its summary's
    value must not change: callees, demands, guards used, whether the summary hands out
    borrowed values or built objects, advances or synchronises; and of its last outcome,
    the limits it hit and whether its next call makes findings."""
    for was, now in zip(old, new):
        if (was.callees != now.callees or was.demands != now.demands or was.used_as_guard != now.used_as_guard
                or was.returns_read != now.returns_read):
            raise GiveUp(f"{qualname}: callees, the callees' values it uses, demands or guards changed")
        a, b = was.summary, now.summary
        if (returns_borrowed(a) != returns_borrowed(b) or a.returns.built != b.returns.built
                or a.advances != b.advances or a.synchronizes != b.synchronizes
                or a.enters_synchronized != b.enters_synchronized
                or a.guards != b.guards or a.undecided != b.undecided
                or a.guards_when != b.guards_when or a.checks_when != b.checks_when):
            raise GiveUp(f"{qualname}: what the file selection or the guard judge reads changed")
    if digest(old[-1].caps) != digest(new[-1].caps) or bool(old[-1].next_call) != bool(new[-1].next_call):
        raise GiveUp(f"{qualname}: its limits or next-call findings changed")


def _decides_by_callers(outcome) -> bool:
    """Does the outcome hold a finding its callers' guards decide (``PASSED_GUARD``), or a
    call passing a guard to be called back (``CallEdge.verdicts``)? Those are decided over
    the whole run's calls (``ProjectAnalysis.decide_passed_guards``), not from the sites."""
    return any(edge.verdicts for edge in outcome.edges) or any(
        step.fact[:1] == (PASSED_GUARD,) for trace in outcome.findings.values() for step in trace)
