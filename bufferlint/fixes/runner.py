"""What the CLI calls: attach fixes to findings, and apply them with verification.

Applying works in rounds, like Ruff's fix loop:

1. take the applicable fixes (``safe``; ``unsafe`` too with ``--unsafe-fixes``) of the
   current findings, at most one of any set of overlapping fixes per file per round;
2. apply them to the files' text in memory; a result that Python cannot parse rejects
   the fixes that broke it;
3. re-analyse the project as it would be with the fixed files, in a *shadow tree* (a
   temporary directory of symlinks to the project's files, with the fixed files written
   as real files), so that nothing in the project is written before it is verified;
4. a fix whose finding is still reported is rejected, and that file's changes of the round
   are dropped (the other fixes are retried in the next round); otherwise the round is
   committed and the fixes of the new findings are planned on the new text.

Rounds stop when nothing applicable is left (at most ``MAX_ROUNDS``). Then the fixed files
are written (``atomic.write_atomic``: atomically, through the inode of a hard-linked file,
never over a read-only one) unless only a diff was asked for. The result returned is what
the files on disk now produce: the last verified analysis, or, when a file could not be
written, a fresh analysis of the files as they are, so that nothing unwritten counts as fixed.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import shutil
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from bufferlint.findings import AnalysisResult, FileError, Finding, Fix
from bufferlint.atomic import write_atomic
from bufferlint.fixes import budget
from bufferlint.fixes.apply import EditConflict, apply_edits, conflicts, decode, encode, unified_diff
from bufferlint.deepstack import run_deep
from bufferlint.gcpause import paused_gc
from bufferlint.fixes.base import SAFE, UNSAFE, FixContext, Project, finding_key
from bufferlint.fixes.planners import plan_fix, planners
from bufferlint.internal import cause, debugging
from bufferlint.jobs import processes
from bufferlint.source import SourceFile, read_bytes, read_source

MAX_ROUNDS = 10
PARALLEL_FILES = 8  # below this, starting worker processes costs more than it saves

Analyse = Callable[[Path, list[Path], list[Path], "list[Path] | None"], AnalysisResult]
"""(project root, all files, report files, the report files to check for syntax and compile
errors (None: all)) -> the reportable analysis result."""


def applicable(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (fix.applicability == SAFE or (unsafe and fix.applicability == UNSAFE))


def attach_fixes(
    findings: Iterable[Finding],
    project: Project,
    texts: dict[Path, str] | None = None,
    rejected: frozenset = frozenset(),
    time_budget: budget.Budget = budget.COMMAND,
    cancel: threading.Event | None = None,
) -> list[Finding]:
    """The findings with ``fix`` set where a fixer can repair them. ``texts``: file texts
    that differ from what is on disk (files fixed in memory); ``rejected``: (finding key,
    fix message) pairs that failed verification, so the fixer offers its next candidate.
    A file not planned within ``time_budget`` (``fixes.budget``) keeps its findings without
    fixes, each with ``fix_error`` saying why (as do all left when ``cancel`` is set)."""
    findings = list(findings)
    by_file: dict[Path, list[int]] = {}
    for position, finding in enumerate(findings):
        by_file.setdefault(finding.path, []).append(position)
    jobs = [(path, [findings[i] for i in positions], (texts or {}).get(path), rejected)
            for path, positions in by_file.items()]
    # LibCST trees are acyclic: see bufferlint.gcpause. Each file is parsed with LibCST (the
    # slow part) once, independently, in forked workers within the time budget: as many as
    # the run may use (``--jobs``: bufferlint.jobs) when there are enough files; the project
    # reaches each worker once, by fork (not pickled with every file), so its module map is
    # built at most once per worker.
    # Largest files first, so that the last file planned is a small one and neither worker
    # waits long for the other at the end.
    _use_project(project)
    order = sorted(range(len(jobs)), key=lambda i: -_size(jobs[i][0], jobs[i][2]))
    with paused_gc():
        results = budget.plan_all([jobs[i] for i in order], _plan_file, _out_of_budget, time_budget,
                                  workers=processes() if len(jobs) >= PARALLEL_FILES else 1, cancel=cancel)
    planned = [None] * len(jobs)
    for i, result in zip(order, results):
        planned[i] = result
    out = list(findings)
    for (path, positions), fixes in zip(by_file.items(), planned):
        for position, (fix, error) in zip(positions, fixes):
            finding = findings[position]
            if fix is not None or finding.fix is not None or error != finding.fix_error:
                out[position] = dataclasses.replace(finding, fix=fix, fix_error=error)
    return out


def _size(path: Path, text: str | None) -> int:
    if text is not None:
        return len(text)
    try:
        return path.stat().st_size
    except OSError:
        return 0


_project: Project | None = None  # the project being planned for, in this process


def _use_project(project: Project) -> None:
    global _project
    _project = project


def _out_of_budget(job, why: str) -> list[tuple[Fix | None, str | None]]:
    """What a file not planned in time gets: each fixable finding says why it has no fix."""
    fixable = planners()
    return [(None, why if finding.rule in fixable else None) for finding in job[1]]


def _plan_file(job) -> list[tuple[Fix | None, str | None]]:
    """The (fix, why there is none) of one file's findings (top level, so a worker process
    can run it). LibCST recurses as deep as the syntax tree: see bufferlint.deepstack."""
    return run_deep(_plan_file_here, job)


def _plan_file_here(job) -> list[tuple[Fix | None, str | None]]:
    path, findings, text, rejected = job
    project = _project
    if text is None:
        source = read_source(path)
        text = source.text if isinstance(source, SourceFile) else None
    if text is None:
        return [(None, None) for _ in findings]
    focus = tuple(line for f in findings for line in range(f.span.line, f.span.end_line + 1))
    context = FixContext(project, path, rejected, focus)
    fixable = planners()
    if any(finding.rule in fixable for finding in findings):
        too_deep = budget.too_deep(text)
        if too_deep is not None:
            return _out_of_budget(job, too_deep)
        try:
            context.source(text)  # the LibCST tree every fixer plans on, parsed once here
        except Exception as exc:  # LibCST rejects some files CPython compiles
            if debugging():
                raise
            error = f"LibCST cannot parse this file ({cause(exc)})"
            return [(None, error if finding.rule in fixable else None) for finding in findings]
    return [(plan_fix(finding, text, context), None) for finding in findings]


@dataclass(frozen=True)
class Rejection:
    finding: Finding
    reason: str

    def describe(self, shown_path: str) -> str:
        span = self.finding.span
        return f"{shown_path}:{span.line}:{span.column}: error: fix for {self.finding.rule} {self.reason}; not applied"


@dataclass
class FixOutcome:
    result: AnalysisResult  # the analysis of the fixed files
    fixed: int = 0  # findings reported before and no longer reported
    applied: int = 0  # fixes applied
    changed: dict[Path, tuple[str, str]] = field(default_factory=dict)  # path -> (old text, new text)
    rejections: list[Rejection] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    write_errors: list[FileError] = field(default_factory=list)

    def diff(self, display: Callable[[Path], str]) -> str:
        return "".join(unified_diff(old, new, display(path)) for path, (old, new) in sorted(self.changed.items()))


_key = finding_key


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


class _File:
    """A file being fixed: its original bytes, codec, and current text."""

    def __init__(self, path: Path) -> None:
        data = read_bytes(path)
        if isinstance(data, FileError):
            raise OSError(data.message)
        self.path = path
        self.data = data
        self.original, self.encoding = decode(data)
        self.text = self.original


def fix_project(
    result: AnalysisResult,
    project: Project,
    files: list[Path],
    report_files: list[Path],
    analyse: Analyse,
    *,
    unsafe: bool = False,
    write: bool = True,
) -> FixOutcome:
    """Apply the applicable fixes of ``result.findings`` (already attached) with verification;
    write the fixed files when ``write``. See the module docstring."""
    initial = result
    state = result
    opened: dict[Path, _File] = {}
    rejected: set[tuple] = set()
    solo: set[tuple] = set()  # keys whose findings are tried one per round (see judge)
    outcome = FixOutcome(result)
    shadow: _Shadow | None = None
    report_set = set(report_files)
    try:
        for _ in range(MAX_ROUNDS):
            candidates = [
                f
                for f in state.findings
                if applicable(f.fix, unsafe) and f.path in report_set and (_key(f), f.fix.message) not in rejected
            ]
            if not candidates:
                break
            candidates = one_per_key(candidates, solo)
            proposal: dict[Path, tuple[str, list[Finding]]] = {}
            for path, group in _by_path(candidates).items():
                if path not in opened:
                    try:
                        opened[path] = _File(path)
                    except OSError:
                        rejected.update((_key(f), f.fix.message) for f in group)
                        continue
                entry = opened[path]
                new, chosen, failed = _apply_group(entry, group)
                for finding, reason in failed:
                    rejected.add((_key(finding), finding.fix.message))
                    outcome.rejections.append(Rejection(finding, reason))
                if chosen:
                    proposal[path] = (new, chosen)
            if not proposal:
                state = _replan(state, project, opened, rejected)
                continue
            if shadow is None:
                shadow = _Shadow(project.root, files, report_files)
            for path, (new, _) in proposal.items():
                shadow.write(path, encode(new, opened[path].encoding))
            after = shadow.analyse(analyse)
            errors = {e.path for e in after.errors}
            before, now = present(state), present(after)
            retry = False
            for path, (new, chosen) in proposal.items():
                if path in errors:
                    failed = [(f, "makes the file unanalysable") for f in chosen]
                else:
                    _, removed_none, undecided = judge(chosen, before, now)
                    failed = [(f, "did not remove the finding") for f in removed_none]
                    if undecided:
                        retry = True
                        solo.update(_key(f) for f in undecided)
                if failed:
                    retry = True
                    for finding, reason in failed:
                        rejected.add((_key(finding), finding.fix.message))
                        outcome.rejections.append(Rejection(finding, reason))
            if retry:  # drop the round: the good fixes are proposed again next round
                for path in proposal:
                    entry = opened[path]
                    shadow.write(path, None if entry.text == entry.original else encode(entry.text, entry.encoding))
                state = _replan(state, project, opened, rejected)
                continue
            for path, (new, chosen) in proposal.items():
                opened[path].text = new
                outcome.applied += len(chosen)
            state = _replan(after, project, opened, rejected)
    finally:
        if shadow is not None:
            shadow.close()

    remaining = present(state)
    outcome.fixed = fixed_count(initial, state)
    # a rejected fix whose finding another candidate then fixed is not worth an error line
    outcome.rejections = [r for r in outcome.rejections if remaining[_key(r.finding)]]
    outcome.result = state
    outcome.changed = {p: (e.original, e.text) for p, e in opened.items() if e.text != e.original}
    if write:
        for path, (_, new) in sorted(outcome.changed.items()):
            entry = opened[path]
            try:
                if read_bytes(path) != entry.data:
                    raise OSError("the file changed while it was being fixed")
                write_atomic(path, encode(new, entry.encoding))
                outcome.written.append(path)
            except OSError as exc:
                outcome.write_errors.append(FileError(path, f"cannot write the fixed file: {exc.strerror or exc}"))
        if outcome.write_errors:
            _recount(outcome, initial, project, files, report_files, analyse)
    return outcome


def _recount(outcome: FixOutcome, initial: AnalysisResult, project: Project, files: list[Path], report_files: list[Path],
             analyse: Analyse) -> None:
    """Some fixed files could not be written: what is fixed is what the files on disk now
    give, so analyse them again (a guard fixed in one file removes findings in others, and a
    guard left unwritten keeps them)."""
    now = analyse(project.root, files, report_files, None)
    now = dataclasses.replace(now, findings=attach_fixes(now.findings, project))
    outcome.result = now
    outcome.fixed = fixed_count(initial, now)
    outcome.changed = {path: change for path, change in outcome.changed.items() if path in outcome.written}


def _replan(result: AnalysisResult, project: Project, opened: dict, rejected: set) -> AnalysisResult:
    texts = {path: entry.text for path, entry in opened.items()}
    return dataclasses.replace(result, findings=attach_fixes(result.findings, project, texts, frozenset(rejected)))


def present(result: AnalysisResult) -> Counter:
    """How many findings of each ``finding_key`` ``result`` holds, those a reported finding
    stands for included (``AnalysisResult.every_site``): a fix that only puts its call under
    a guard reported as broken leaves its finding present, as a step of the guard's."""
    return Counter(_key(f) for f in result.every_site())


def fixed_count(initial: AnalysisResult, final: AnalysisResult) -> int:
    """How many of ``initial``'s reported findings ``final`` no longer has anywhere: one
    finding per bug, so a guard's fix counts its BL002, not the calls it stood for, and a
    call that only went under a broken guard (reported no more, yet present as a step of
    the guard's finding: ``present``) is not fixed."""
    shown_before, shown_after = Counter(_key(f) for f in initial.findings), Counter(_key(f) for f in final.findings)
    before, after = present(initial), present(final)
    return sum(min(shown_before[key] - shown_after[key], before[key] - after[key])
               for key in shown_before if shown_before[key] > shown_after[key] and before[key] > after[key])


def judge(chosen: list[Finding], before: Counter, now: Counter) -> tuple[list[Finding], list[Finding], list[Finding]]:
    """The findings whose fixes were applied together, as (fixed, not fixed, undecided), from
    how many findings of each ``finding_key`` were reported before and are now. Findings
    are told apart across edits by their key alone, so when a function hands one value over
    twice and only some of its findings went away, which fix failed is undecided: those
    findings are tried again one per round (``one_per_key``), never rejected together."""
    groups: dict[tuple, list[Finding]] = {}
    for finding in chosen:
        groups.setdefault(_key(finding), []).append(finding)
    fixed: list[Finding] = []
    failed: list[Finding] = []
    undecided: list[Finding] = []
    for key, group in groups.items():
        removed = before[key] - now[key]
        (fixed if removed >= len(group) else failed if removed <= 0 else undecided).extend(group)
    return fixed, failed, undecided


def one_per_key(findings: list[Finding], solo: set[tuple]) -> list[Finding]:
    """``findings`` with only the first (in file order) of each key in ``solo``."""
    seen: set[tuple] = set()
    out = []
    for finding in sorted(findings, key=Finding.sort_key):
        key = _key(finding)
        if key in solo and key in seen:
            continue
        seen.add(key)
        out.append(finding)
    return out


def _by_path(findings: list[Finding]) -> dict[Path, list[Finding]]:
    groups: dict[Path, list[Finding]] = {}
    for finding in sorted(findings, key=Finding.sort_key):
        groups.setdefault(finding.path, []).append(finding)
    return groups


def _apply_group(entry: _File, group: list[Finding]) -> tuple[str, list[Finding], list[tuple[Finding, str]]]:
    """Apply the non-overlapping fixes of one file (the others wait for the next round).
    Returns (new text, applied findings, rejected (finding, reason))."""
    chosen: list[Finding] = []
    failed: list[tuple[Finding, str]] = []
    for finding in group:
        if any(conflicts(finding.fix.edits, other.fix.edits) for other in chosen):
            continue
        try:
            alone = apply_edits(entry.text, finding.fix.edits)
        except EditConflict:
            failed.append((finding, "has edits outside the file or overlapping each other"))
            continue
        if not _parses(alone):
            failed.append((finding, "breaks parsing"))
            continue
        chosen.append(finding)
    if not chosen:
        return entry.text, [], failed
    new = apply_edits(entry.text, [edit for finding in chosen for edit in finding.fix.edits])
    if not _parses(new):
        failed += [(finding, "breaks parsing together with another fix") for finding in chosen]
        return entry.text, [], failed
    try:
        encode(new, entry.encoding)
    except UnicodeEncodeError:
        failed += [(finding, f"cannot be encoded as {entry.encoding}") for finding in chosen]
        return entry.text, [], failed
    return new, chosen, failed


class _Shadow:
    """A temporary copy of the project made of symlinks, where fixed files can be tried.

    Module names are derived from paths below the project root (and from ``__init__.py``
    files above it), so the shadow root keeps the root's name and package ancestors."""

    def __init__(self, root: Path, files: list[Path], report_files: list[Path]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bufferlint-fix-"))
        top = root
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent
        relative = root.relative_to(top) if top != root else Path(root.name or "project")
        self.root = self.dir / "tree" / relative
        self.root.mkdir(parents=True)
        package = self.root
        real = root
        while package.parent != self.dir / "tree" and real != top:
            package, real = package.parent, real.parent
            if (real / "__init__.py").is_file():
                os.symlink(real / "__init__.py", package / "__init__.py")
        self.to_shadow: dict[Path, Path] = {}
        for index, path in enumerate(sorted(set(files) | set(report_files))):
            try:
                target = self.root / path.relative_to(root)
            except ValueError:
                target = self.dir / "outside" / str(index) / path.name
            self.to_shadow[path] = target
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path, target)
        if (root / "__init__.py").is_file() and not (self.root / "__init__.py").exists():
            os.symlink(root / "__init__.py", self.root / "__init__.py")
        self.to_real = {shadow: real for real, shadow in self.to_shadow.items()}
        self.files = [self.to_shadow[p] for p in files]
        self.report_files = [self.to_shadow[p] for p in report_files]

    def write(self, path: Path, data: bytes | None) -> None:
        """Put ``data`` in place of ``path`` in the shadow tree (None: the real file again)."""
        target = self.to_shadow[path]
        target.unlink()
        if data is None:
            os.symlink(path, target)
        else:
            target.write_bytes(data)

    def analyse(self, analyse: Analyse, written: list[Path] | None = None) -> AnalysisResult:
        """The shadow project's analysis; ``written``: the (real) files whose errors are asked
        about, when not all (the others are the real files, whose errors are known)."""
        check = None if written is None else [self.to_shadow[path] for path in written]
        result = analyse(self.root, self.files, self.report_files, check)
        real = self.real
        errors = [dataclasses.replace(e, path=real(e.path)) for e in result.errors]
        covered = [(self._real_finding(f), tuple(dataclasses.replace(s, path=real(s.path)) for s in spans))
                   for f, spans in result.covered]
        return dataclasses.replace(result, findings=[self._real_finding(f) for f in result.findings], errors=errors,
                                   covered=covered)

    def _real_finding(self, finding: Finding) -> Finding:
        """``finding`` of the shadow project, with the real files' paths."""
        real = self.real
        return dataclasses.replace(
            finding,
            span=dataclasses.replace(finding.span, path=real(finding.span.path)),
            trace=tuple(dataclasses.replace(s, path=real(s.path)) for s in finding.trace),
        )

    def real(self, path: Path) -> Path:
        return self.to_real.get(path, path)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
