"""Using bufferlint from Python: the one entry point every front end shares.

The ``bufferlint`` command and a language server both need the same thing: check some
files of a project with its root, configuration, rule packs, rule selection, suppression
comments and baseline applied exactly the same way, and get the fixes of what remains.
So that logic lives here, once, and returns plain data; front ends only render it.

* :func:`check` takes :class:`CheckOptions` and returns a :class:`Report`: the findings
  left after selection, suppression and baseline (with their fixes when asked), the files
  that could not be analysed, the analysis' notices, the warnings about suppression
  comments, and the baseline's summary.
* :func:`fix` applies the fixes with verification (see :mod:`bufferlint.fixes.runner`)
  and returns a :class:`FixReport`; with ``write=False`` nothing is written and the
  verified new text of each file is in ``FixReport.changed`` ("all safe fixes in this
  file" for an editor).
* :func:`open_project` resolves the project root and settings alone (``--show-settings``).
* :func:`plan_fixes` plans and verifies the fixes of a report made without them (an editor shows the
  findings first). ``CheckOptions.overlays`` gives unsaved editor text to read instead of
  the files on disk.

Nothing here prints or exits. Bad input is data too: a path that cannot be read is a
:class:`~bufferlint.findings.FileError` in ``Report.errors`` (the other files are still
analysed), and a run that cannot start (bad configuration, no rule selected, an unreadable
baseline) is a :class:`Report` whose ``error`` says why in one line. Messages name options
by their command-line spelling (``--select``), which is also what the fields here are called.
"""

from __future__ import annotations

import dataclasses
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from bufferlint import analysis, baseline, jobs
from bufferlint.analysis.frontend.trees import shared_trees
from bufferlint.catalog import RULES
from bufferlint.config import ConfigError, Settings, file_size, job_count, load_settings, rule_selectors
from bufferlint.discovery import (ProjectRoot, absolute, discover, expand_paths, ignored_matcher, locate_project_root,
                                  path_order)
from bufferlint.findings import AnalysisResult, FileError, Finding, Fix
from bufferlint.fingerprint import fingerprints
from bufferlint.progress import announce
from bufferlint.reporters.base import count, display_path
from bufferlint.cache import Cache, cache_directory, fingerprint, python_fingerprint, tool_fingerprint
from bufferlint.source import SourceFile, overlaid, read_bytes, read_source, set_max_bytes
from bufferlint.suppressions import directive_warnings, may_concern_bufferlint, suppressed

if TYPE_CHECKING:  # the fixers import LibCST: only runs that plan fixes pay for it (pre-commit does not)
    from bufferlint.fixes.base import Project as FixProject
    from bufferlint.fixes.runner import FixOutcome


class UsageError(Exception):
    """A problem with how bufferlint was called: one line (the command exits 2)."""


@dataclass(frozen=True)
class CheckOptions:
    """What to check and how; every field mirrors the ``bufferlint check`` option of that name.

    ``paths`` choose what is reported; the analysis always sees the whole project they
    belong to (``project_root``, default: the nearest directory with a pyproject.toml).
    ``select`` replaces the configured selection and ``ignore`` adds to it (as in Ruff);
    None leaves the configuration's, an empty list selects nothing (an error).
    ``fixes``: plan a fix for each finding (parses the reported files with LibCST: slow,
    so only when the fixes are shown or applied). ``suppression_warnings``: collect the
    problems of suppression comments (and with ``warn_unused_noqa`` the unused ones).
    ``cache``: read and write the project's cache (``bufferlint.cache``; the CLI's
    ``--no-cache`` turns it off).
    ``overlays`` (no command-line twin): absolute path -> text of files whose current text
    is not what is on disk (an editor's unsaved buffers); everything that reads a file for
    the run reads that text instead, and the cache hashes it (see ``source.overlaid``).
    """

    paths: Sequence[Path] = (Path("."),)
    project_root: Path | None = None
    config: Path | None = None
    select: Sequence[str] | None = None
    extend_select: Sequence[str] | None = None
    ignore: Sequence[str] | None = None
    exclude: Sequence[str] | None = None  # replaces the configured exclude
    extend_exclude: Sequence[str] | None = None  # added to the configured extend-exclude
    respect_gitignore: bool | None = None
    force_exclude: bool | None = None
    max_file_size: float | None = None  # MiB
    jobs: int | None = None  # processes the run may use (bufferlint.jobs); None: the configured number
    baseline: Path | None = None
    write_baseline: Path | None = None
    fixes: bool = False
    suppression_warnings: bool = True
    warn_unused_noqa: bool = False
    cache: bool = True
    overlays: Mapping[Path, str] = field(default_factory=dict)
    # Hears (files parsed, functions analysed) while the analysis runs (the CLI's progress line);
    # also each phase and each function's name, if it has ``phase``/``function_started``
    # (bufferlint.progress.announce).
    progress: Callable[[int, int], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Project:
    """The project a run belongs to: its root and the settings in effect there."""

    root: Path
    settings: Settings
    reason: str = ""  # why this folder is the root (``-v`` says it)

    def files(self, covered: Callable[[str], bool] | None = None) -> list[Path]:
        """Every Python file of the project the analysis sees (excludes and, with
        ``respect-gitignore``, git's ignore rules applied). ``covered``: the predicate
        ``ignored_matcher`` makes of them, when the caller has it."""
        return discover(self.root, covered or ignored_matcher(self.settings))


@dataclass(frozen=True)
class SuppressionWarning:
    """A suppression comment that is malformed, names an unknown code, or suppresses nothing."""

    path: Path
    line: int
    column: int
    message: str


@dataclass
class Report(AnalysisResult):
    """The outcome of :func:`check`. It is an :class:`AnalysisResult` (so every reporter
    renders it) whose ``findings`` are final: selected, not suppressed, not baselined.
    ``errors`` start with the paths that could not be used (``path_errors``)."""

    project: Project | None = None
    files: list[Path] = field(default_factory=list)  # every file analysed
    report_files: list[Path] = field(default_factory=list)  # the files reported on
    path_errors: list[FileError] = field(default_factory=list)  # missing or unlistable paths
    suppression_warnings: list[SuppressionWarning] = field(default_factory=list)
    # findings whose fix works only with the guards' fixes (counted as --fix fixes them, never
    # offered), each with the guard fixes' applicabilities: bufferlint.fixes.verify
    fixable_after_guards: list[tuple[Finding, tuple[str, ...]]] = field(default_factory=list)
    baseline_note: str | None = None  # "wrote N findings to the baseline F" / "N baselined findings not shown, M fixed"
    error: str | None = None  # why the run could not be done; then only suppression_warnings may be set

    @property
    def lost_fixes(self) -> list[Finding]:
        """Findings of fixable rules whose file could not be parsed for fixing (``fix_error``)."""
        return [f for f in self.findings if f.fix_error]

    def findings_in(self, path: Path) -> list[Finding]:
        """This report's findings in one file, in file order."""
        path = absolute(path)
        return sorted((f for f in self.findings if f.path == path), key=Finding.sort_key)

    def safe_fixes(self, path: Path, unsafe: bool = False) -> list[Fix]:
        """The fixes of one file's findings that ``--fix`` would apply (with ``unsafe``, as
        with ``--unsafe-fixes``); planned only when the report was made with ``fixes=True``.
        Each was verified on its own (bufferlint.fixes.verify); :func:`fix` applies them
        together and verifies the result again."""
        from bufferlint.fixes.runner import applicable

        return [f.fix for f in self.findings_in(path) if applicable(f.fix, unsafe)]


@dataclass
class FixReport:
    """The outcome of :func:`fix`: ``report`` is what the fixed files produce (the files
    on disk, or with ``write=False`` the files as they would be); ``outcome`` says what was
    fixed, changed (old and new text per file), rejected and not written."""

    report: Report
    outcome: FixOutcome

    @property
    def changed(self) -> dict[Path, tuple[str, str]]:
        return self.outcome.changed


def open_project(options: CheckOptions) -> Project | str:
    """The project root and the settings in effect (configuration file, packs, and the
    options' selection), or one line saying why they cannot be used."""
    try:
        paths = [absolute(p) for p in options.paths]
        located = _project_root(options.project_root, paths)
        settings = load_settings(located.path, absolute(options.config) if options.config else None)
        return Project(located.path, _with_options(settings, options), located.reason)
    except (UsageError, ConfigError) as exc:
        return str(exc)


def check(options: CheckOptions) -> Report:
    """Analyse the project the paths belong to and report on the paths: selection,
    suppression comments and baseline applied; fixes planned when ``options.fixes``."""
    if options.write_baseline and options.baseline:
        return Report(error="--write-baseline cannot be combined with --baseline")
    with overlaid(options.overlays):
        return _check(options)


def _check(options: CheckOptions) -> Report:
    # Verifying the fixes analyses the project again, batch after batch: the analyses share
    # the trees of the files no fix wrote (bufferlint.analysis.frontend.trees).
    with shared_trees() if options.fixes else nullcontext():
        report = _analyse(options)
        if report.error is not None:
            return report
        try:
            _apply_baseline(report, options)
        except baseline.BaselineError as exc:
            return Report(error=str(exc), suppression_warnings=report.suppression_warnings)
        if options.fixes:
            _plan_verified_fixes(report, options.progress)
        return report


def _plan_verified_fixes(report: Report, progress: Callable[[int, int], None] | None = None, *,
                         editor: bool = False, cancel: threading.Event | None = None) -> None:
    """Plan each finding's fix and keep only fixes that remove their finding
    (bufferlint.fixes.verify): what every report shows. ``editor``, ``cancel``: as for
    :func:`plan_fixes` (a cancelled verification offers none of the fixes it did not verify)."""
    from bufferlint.fixes import budget
    from bufferlint.fixes.runner import attach_fixes
    from bufferlint.fixes.verify import verify_fixes

    project = _fix_project(report)
    announce(progress, f"planning fixes for {count(len(report.findings), 'finding')}")
    report.findings = attach_fixes(report.findings, project, time_budget=budget.EDITOR if editor else budget.COMMAND,
                                   cancel=cancel)
    with shared_trees():
        verified = verify_fixes(report, project, report.files, report.report_files,
                                _reanalyser(report.project.settings, progress), progress, cancel)
    report.findings, report.fixable_after_guards = verified.findings, verified.after_guards
    report.notices = report.notices + verified.notices


def _reanalyser(settings: Settings, progress: Callable[[int, int], None] | None = None
                ) -> Callable[[Path, list[Path], list[Path], list[Path] | None], AnalysisResult]:
    """Analyse a (shadow) project as this run does, to verify fixes: the reportable findings
    (and the syntax errors of ``checked``, the files a fix wrote, when given)."""
    def reanalyse(root: Path, all_files: list[Path], reported: list[Path], checked: list[Path] | None
                  ) -> AnalysisResult:
        again = analysis.analyze_project(root, all_files, reported, settings.analysed_vocab(), progress=progress,
                                         check_files=checked)
        again.findings, again.covered = _selected(again, settings)
        return again

    return reanalyse


def plan_fixes(report: Report, overlays: Mapping[Path, str] | None = None, *, editor: bool = False,
               cancel: threading.Event | None = None) -> Report:
    """``report`` (made without ``fixes``) with the fix of each finding planned, as
    ``check`` plans them with ``fixes=True``: show the findings first, plan their fixes
    after (an editor). ``overlays``: the ones the report was made with; ``editor``: plan
    within an editor's time budget (``fixes.budget.EDITOR``), not the command's; ``cancel``:
    set, it stops the planning (the findings not planned yet keep no fix, and say why)."""
    if report.error is not None:
        return report
    planned = dataclasses.replace(report)
    if report.project is not None:  # another project may have been analysed since
        jobs.use(report.project.settings.jobs)
    with overlaid(overlays or {}):
        _plan_verified_fixes(planned, editor=editor, cancel=cancel)
    return planned


def fix(options: CheckOptions, *, unsafe: bool = False, write: bool = True,
        verify_remaining: bool = False) -> FixReport | Report:
    """Apply the safe fixes (and with ``unsafe`` the unsafe ones) to the reported files,
    each verified by re-analysis; write the fixed files when ``write``. Returns the Report
    alone when the run could not start (its ``error`` says why). Baselines do not apply:
    fixing repairs what is there, baselined or not. With ``options.overlays`` the fixes
    apply to the overlaid text, so only ``write=False`` is allowed (writing would replace
    the files on disk with text the user has not saved). ``verify_remaining``: the findings
    that remain keep only fixes that remove them (as :func:`check` verifies them), for a
    report that shows them (after writing only); else they have none."""
    if write and options.overlays:
        return Report(error="fixes of overlaid (unsaved) files cannot be written; use write=False")
    with overlaid(options.overlays), shared_trees():  # each round analyses again: see frontend.trees
        return _fix(options, unsafe, write, verify_remaining)


def _fix(options: CheckOptions, unsafe: bool, write: bool, verify_remaining: bool) -> FixReport | Report:
    from bufferlint.fixes import runner

    report = _analyse(options)
    if report.error is not None:
        return report
    project = _fix_project(report)
    report.findings = runner.attach_fixes(report.findings, project)
    announce(options.progress, f"fixing {count(len(report.findings), 'finding')}", len(report.files))
    outcome = runner.fix_project(report, project, report.files, report.report_files,
                                 _reanalyser(report.project.settings, options.progress), unsafe=unsafe, write=write)
    known = {e.path for e in report.path_errors}
    errors = report.path_errors + [e for e in outcome.result.errors if e.path not in known] + outcome.write_errors
    final = _as_report(outcome.result, errors=errors, project=report.project, files=report.files,
                       report_files=report.report_files, path_errors=report.path_errors,
                       suppression_warnings=report.suppression_warnings)
    # The remaining findings' fixes were planned on the fixed text but not all tried.
    final.findings = [dataclasses.replace(f, fix=None) for f in final.findings]
    if verify_remaining and write and final.findings:  # the files on disk are what was analysed
        _plan_verified_fixes(final, options.progress)
    return FixReport(final, outcome)


# -- the steps ---------------------------------------------------------------------------


def project_cache(project: Project) -> Cache:
    """The project's cache, under a key for bufferlint's own code, the Python running it and
    the settings that shape the analysis (another vocabulary, declared library versions,
    file-size limit or Python never reuses this one's)."""
    settings = project.settings
    key = fingerprint(tool_fingerprint(), python_fingerprint(), settings.analysed_vocab(), settings.declarations, str(project.root),
                      settings.max_file_size)
    return Cache(cache_directory(project.root, settings.cache_dir), key)


def _analyse(options: CheckOptions) -> Report:
    """Scope, settings, analysis, then the reportable findings."""
    project = open_project(options)
    if isinstance(project, str):
        return Report(error=project)
    settings = project.settings
    set_max_bytes(settings.max_file_size)
    jobs.use(settings.jobs)
    covered = ignored_matcher(settings)
    project_files = project.files(covered)
    report_files, path_errors = expand_paths([absolute(p) for p in options.paths], project.root, settings,
                                             project_files, covered)
    result = AnalysisResult()
    files: list[Path] = []
    if report_files:
        files = sorted(set(project_files) | set(report_files), key=path_order)
        announce(options.progress, "analysing", len(files))
        result = analysis.analyze_project(project.root, files, report_files, settings.analysed_vocab(),
                                          project_cache(project) if options.cache else None, options.progress)
    found = _with_uncovered(result, settings)
    warnings = _suppression_warnings(report_files, found, settings, options.warn_unused_noqa) \
        if options.suppression_warnings else []
    findings, standing = _selected(result, settings)
    return _as_report(result, findings=findings, covered=standing, errors=path_errors + result.errors,
                      project=project, files=files, report_files=report_files, path_errors=path_errors,
                      suppression_warnings=warnings, notices=settings.declarations.problems + result.notices)


def _as_report(result: AnalysisResult, **fields) -> Report:
    """A Report holding ``result``'s analysis (counts, notices, ...) and ``fields``."""
    analysed = {f.name: getattr(result, f.name) for f in dataclasses.fields(AnalysisResult)}
    return Report(**{**analysed, **fields})


def _fix_project(report: Report) -> FixProject:
    from bufferlint.fixes.base import Project as FixProject

    return FixProject(report.project.root, report.project.settings.vocab, report.files)


def _project_root(option: Path | None, paths: list[Path]) -> ProjectRoot:
    if option is None:
        return locate_project_root(paths)
    root = absolute(option)
    if not root.is_dir():
        raise UsageError(f"--project-root {option}: not a directory")
    return ProjectRoot(root, "--project-root")


def _with_options(settings: Settings, options: CheckOptions) -> Settings:
    """``select`` replaces the configured selection, ``ignore`` adds to it (as in Ruff)."""
    changes: dict = {}
    if options.select is not None:
        changes["select"] = rule_selectors(list(options.select), "--select")
        changes["extend_select"] = ()  # as in Ruff: the command line's selection is the selection
    if options.extend_select is not None:
        changes["extend_select"] = changes.get("extend_select", settings.extend_select) + rule_selectors(
            list(options.extend_select), "--extend-select")
    if options.exclude is not None:
        changes["exclude"] = tuple(options.exclude)
    if options.extend_exclude is not None:
        changes["extend_exclude"] = settings.extend_exclude + tuple(options.extend_exclude)
    for name in ("respect_gitignore", "force_exclude"):
        if getattr(options, name) is not None:
            changes[name] = getattr(options, name)
    if options.ignore is not None:
        changes["ignore"] = settings.ignore + rule_selectors(list(options.ignore), "--ignore")
    if options.max_file_size is not None:
        changes["max_file_size"] = file_size(options.max_file_size, "--max-file-size")
    if options.jobs is not None:
        changes["jobs"] = job_count(options.jobs, "--jobs")
    settings = dataclasses.replace(settings, **changes)
    if not any(settings.is_enabled(code) for code in RULES):
        # As Ruff: a selection that checks nothing is a mistake, not a clean result.
        chosen = options.select is not None or options.ignore is not None or options.extend_select is not None
        where = "--select/--ignore" if chosen else (
            f"{settings.config_path}: [tool.bufferlint]" if settings.config_path else "select")
        raise UsageError(
            f"{where}: no rule is selected (select = {list(settings.select)}, ignore = {list(settings.ignore)}); "
            f"nothing would be checked (known rules: {', '.join(RULES)})"
        )
    return settings


def _with_uncovered(result: AnalysisResult, settings: Settings) -> list[Finding]:
    """The findings, and those a guard's finding stands for (``AnalysisResult.covered``)
    when the selection reports none of those guard findings (their rule not selected, or
    ignored for their file): one finding per bug, and the bug still told."""
    shown = {f.span for f in result.findings if settings.is_enabled(f.rule) and not _per_file_ignored(f, settings)}
    return result.findings + [finding for finding, spans in result.covered if not shown.intersection(spans)]


def _selected(result: AnalysisResult, settings: Settings) -> tuple[list[Finding], list[tuple]]:
    """The findings the run reports (``_with_uncovered``, then ``_reportable``), and the
    covered findings a reported finding stands for that the selection would report on their
    own (as ``(finding, guard spans)``): a report's ``covered``, so that ``every_site`` counts
    each place a bug shows exactly once."""
    found = _with_uncovered(result, settings)
    given_back = {id(finding) for finding in found}
    standing = [(finding, spans) for finding, spans in result.covered if id(finding) not in given_back]
    kept = {id(finding) for finding in _reportable([finding for finding, _ in standing], settings)}
    return _reportable(found, settings), [(finding, spans) for finding, spans in standing if id(finding) in kept]


def _reportable(findings: list[Finding], settings: Settings) -> list[Finding]:
    """Drop findings of rules not selected and findings a suppression comment covers."""
    sources: dict[Path, SourceFile | None] = {}
    kept = []
    for finding in findings:
        if not settings.is_enabled(finding.rule) or _per_file_ignored(finding, settings):
            continue
        if finding.path not in sources:
            source = read_source(finding.path)
            sources[finding.path] = source if isinstance(source, SourceFile) else None
        source = sources[finding.path]
        if source is None or not suppressed(finding, source.text):
            kept.append(finding)
    return kept


def _per_file_ignored(finding: Finding, settings: Settings) -> bool:
    if not settings.per_file_ignores:
        return False
    try:
        relative = finding.path.relative_to(settings.root).as_posix()
    except ValueError:
        relative = finding.path.name
    return settings.ignored_in(finding.rule, relative)


def _suppression_warnings(report_files: list[Path], findings: list[Finding], settings: Settings,
                          warn_unused: bool) -> list[SuppressionWarning]:
    """Malformed directives and unknown codes in the reported files, and with
    ``warn_unused`` directives that suppress nothing (``findings``: before suppression)."""
    by_path: dict[Path, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    warnings = []
    for path in report_files:
        data = read_bytes(path)
        if isinstance(data, FileError) or not may_concern_bufferlint(data):
            continue
        source = read_source(path, data)
        if isinstance(source, SourceFile):
            for line, column, message in directive_warnings(source.text, by_path.get(path, []), settings.is_enabled,
                                                            warn_unused):
                warnings.append(SuppressionWarning(path, line, column, message))
    return warnings


def _apply_baseline(report: Report, options: CheckOptions) -> None:
    """``write_baseline``: record the findings and report none; ``baseline``: report only
    the findings it does not hold. Either way ``report.baseline_note`` says what happened."""
    if not (options.baseline or options.write_baseline):
        return
    root, settings = report.project.root, report.project.settings
    prints = fingerprints(report.findings, root)
    if options.write_baseline:
        baseline.write(absolute(options.write_baseline), report.findings, prints, root, str(options.write_baseline))
        report.baseline_note = f"wrote {count(len(report.findings), 'finding')} to the baseline {options.write_baseline}"
        report.findings = []
        return
    checked = {display_path(path, root) for path in report.report_files}
    outcome = baseline.apply(
        baseline.load(absolute(options.baseline), str(options.baseline)), report.findings, prints,
        lambda entry: entry.path in checked and settings.is_enabled(entry.rule),
    )
    report.findings = outcome.new
    report.baseline_note = f"{count(outcome.baselined, 'baselined finding')} not shown, {outcome.fixed} fixed"
