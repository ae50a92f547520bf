"""The ``bufferlint`` command.

Exit codes are a contract with CI and pre-commit: 0 no findings, 1 findings, 2 the run
could not do what was asked (bad usage, bad configuration, or paths that could not be
analysed; every other file is still analysed and reported). No traceback ever reaches
the user; ``BUFFERLINT_DEBUG=1`` re-raises internal errors for bug reports.

Fixes (``check --fix``, ``--unsafe-fixes``, ``--diff``; ``bufferlint fix`` is ``check --fix``):
the fixed files are re-analysed before anything is written, and the exit code is about
what remains: 0 when no finding remains, 1 when some do (or, with ``--diff``, when there is
a diff), 2 as above. A fix that does not remove its finding, or that breaks parsing, is
not applied and is reported on stderr as ``path:line:col: error: fix for BL00x ...; not
applied``; as in Ruff (which reverts a fix that introduces a syntax error and carries on)
that does not by itself make the run fail: the finding is still reported, so the exit
code is 1.

Subcommands are registered in ``build_parser``; each sets a ``handler(args) -> int``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Sequence

from bufferlint import __version__, analysis, baseline
from bufferlint.atomic import write_atomic
from bufferlint.catalog import RULES, get_rule
from bufferlint.config import ConfigError, Settings, file_size, load_settings, rule_selectors
from bufferlint.discovery import ProjectRoot, absolute, discover, expand_paths, locate_project_root
from bufferlint.findings import AnalysisResult, FileError, Finding
from bufferlint.fixes.runner import FixOutcome, Project, attach_fixes, fix_project
from bufferlint.reporters.base import display_path
from bufferlint.fingerprint import fingerprints, relative_path
from bufferlint.noqa import add_noqa
from bufferlint.progress import Progress, verbose_line
from bufferlint.reporters import REPORTERS, statistics
from bufferlint.reporters.text import summary
from bufferlint.source import SourceFile, read_bytes, read_source, set_max_bytes
from bufferlint.suppressions import directive_warnings, may_concern_bufferlint, suppressed

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS_WITH_FIXES = frozenset({"json", "sarif", "rdjson", "rdjsonl"})


class UsageError(Exception):
    """A problem with how bufferlint was called or configured: one line, exit 2."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["fix"]:  # `bufferlint fix ARGS` is `bufferlint check --fix ARGS`
        argv = ["check", "--fix", *argv[1:]]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or argparse's own usage error (exit 2)
        return int(exc.code or 0)
    try:
        return args.handler(args)
    except (UsageError, ConfigError) as exc:
        print(f"bufferlint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("bufferlint: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("BUFFERLINT_DEBUG") == "1":
            raise
        print(
            f"bufferlint: internal error: {type(exc).__name__}: {exc} (set BUFFERLINT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bufferlint",
        description="Find zero-copy views of reused buffers that reach async consumers.",
    )
    parser.add_argument("--version", action="version", version=f"bufferlint {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="analyse files and report findings")
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH",
                       help="files or directories to report on (default: .)")
    check.add_argument("--format", choices=sorted(REPORTERS), default="text", help="output format (default: text)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings (still 2 on errors)")
    check.add_argument("--project-root", type=Path, metavar="DIR",
                       help="the project the paths belong to (default: the nearest directory above them with a "
                            "pyproject.toml, setup.cfg or setup.py, else their git work tree)")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="print the project root and how many files were analysed and parsed (on stderr)")
    check.add_argument("--config", type=Path, metavar="PATH", help="pyproject.toml to read [tool.bufferlint] from")
    check.add_argument("--select", action="append", metavar="CODES",
                       help="comma-separated rule codes or prefixes to report (replaces the configured select)")
    check.add_argument("--ignore", action="append", metavar="CODES",
                       help="comma-separated rule codes or prefixes not to report (added to the configured ignore)")
    check.add_argument("--max-file-size", type=float, metavar="MIB",
                       help="do not analyse files larger than this many MiB (default: 5)")
    check.add_argument("--no-color", action="store_true", help="never colour the output (it is only coloured on a TTY)")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings and vocabulary in effect, with where each entry comes from, and exit")
    check.add_argument("--fix", action="store_true", help="apply safe fixes, then report what remains")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="also apply (with --fix/--diff) fixes that add a dependency or change performance")
    check.add_argument("--diff", action="store_true",
                       help="print the fixes as a unified diff instead of writing them (exit 1 if there is a diff)")
    _add_report_options(check)
    check.set_defaults(handler=run_check)

    commands.add_parser("fix", help="alias of `check --fix` (takes the same options)", add_help=False)

    rule = commands.add_parser("rule", help="show the documentation of one rule")
    rule.add_argument("code", help="rule code (BL001) or name")
    rule.set_defaults(handler=show_rule)

    rules = commands.add_parser("rules", help="list all rules")
    rules.set_defaults(handler=list_rules)

    shim = commands.add_parser("shim", help="write a start-up module that makes the flagged loaders safe at runtime")
    shim.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH")
    shim.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="the module to write")
    shim.add_argument("--policy", choices=("sync", "copy", "raise"), default="sync",
                      help="what a borrowed submission becomes (default: sync, the upstream fix)")
    shim.add_argument("--project-root", type=Path, metavar="DIR")
    shim.add_argument("--config", type=Path, metavar="PATH")
    shim.set_defaults(handler=write_shim, select=None, ignore=None)
    return parser


def run_check(args: argparse.Namespace) -> int:
    if args.show_settings:
        return _show_settings(args)
    _check_report_options(args)
    run = _analyse(args)
    root, settings, files, report_files, result, errors = (
        run.root, run.settings, run.files, run.report_files, run.result, run.errors
    )
    project = Project(root, settings.vocab, files)
    if args.fix or args.diff or args.statistics or args.format in FORMATS_WITH_FIXES:
        # Planning fixes parses each reported file with LibCST (the slow, full syntax tree):
        # only when a fix is applied or shown.
        result.findings = attach_fixes(result.findings, project)
    if args.fix or args.diff:
        return _run_fixes(args, result, project, files, report_files, settings, errors)
    _warn_lost_fixes(args, result.findings)
    return _report(args, result, root, report_files, settings)


def _warn_lost_fixes(args: argparse.Namespace, findings: list[Finding]) -> None:
    """Say on stderr which findings have no fix because their file could not be parsed for
    fixing. JSON and SARIF carry it in the report (``fix_error``, tool notifications)."""
    if args.format in ("json", "sarif") and not args.statistics and not args.diff:
        return
    cwd = Path.cwd()
    for finding in findings:
        if finding.fix_error:
            span = finding.span
            print(f"{display_path(finding.path, cwd)}:{span.line}:{span.column}: warning: no fix for {finding.rule}: "
                  f"{finding.fix_error}", file=sys.stderr)


def _add_report_options(check: argparse.ArgumentParser) -> None:
    check.add_argument("-o", "--output-file", type=Path, metavar="FILE", help="write the report to FILE instead of stdout")
    check.add_argument("--statistics", action="store_true",
                       help="print the number of findings per rule instead of the findings (text or json)")
    check.add_argument("-q", "--quiet", action="store_true", help="print the findings and nothing else (no summary)")
    check.add_argument("--baseline", type=Path, metavar="FILE", help="report only findings not recorded in FILE")
    check.add_argument("--write-baseline", type=Path, metavar="FILE",
                       help="record the current findings in FILE (then report none of them)")
    check.add_argument("--add-noqa", action="store_true",
                       help="add '# noqa: BLxxx' to every line with a finding instead of reporting it")
    check.add_argument("--warn-unused-noqa", action="store_true",
                       help="warn about suppression comments for bufferlint rules that suppress nothing (Ruff's RUF100)")


def _check_report_options(args: argparse.Namespace) -> None:
    if args.write_baseline and (args.baseline or args.add_noqa):
        raise UsageError("--write-baseline cannot be combined with --baseline or --add-noqa")
    if args.statistics and args.format not in ("text", "json"):
        raise UsageError(f"--statistics prints text or json, not {args.format}")


def _report(args: argparse.Namespace, result: AnalysisResult, root: Path, report_files: list[Path], settings: Settings) -> int:
    """Baseline, --add-noqa, rendering and the exit code, once the findings are final."""
    notes = _apply_baseline(args, result, root, report_files, settings)
    if args.add_noqa:
        return _add_noqa(args, result, root)

    cwd = Path.cwd()
    to_stdout = args.output_file is None
    color = (args.format == "text" and to_stdout and not args.no_color and "NO_COLOR" not in os.environ
             and sys.stdout.isatty())
    if args.statistics:
        output = statistics.render_json(result) if args.format == "json" else statistics.render_text(result)
    else:
        output = REPORTERS[args.format](result, cwd, color=color, root=root)
    if to_stdout:
        sys.stdout.write(output)
    else:
        try:
            absolute(args.output_file).write_text(output, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--output-file {args.output_file}: cannot write: {exc.strerror or exc}") from None
    for notice in result.notices:  # a limit of the analysis is never silent, even with --quiet
        print(f"bufferlint: warning: {notice}", file=sys.stderr)
    if not args.quiet:
        if args.format == "text":
            line = summary(result, len(report_files))
            print(f"{line} {notes[0][0].upper()}{notes[0][1:]}." if notes else line, file=sys.stderr)
        else:
            for note in notes:
                print(f"bufferlint: {note}", file=sys.stderr)
    if result.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if result.findings and not args.exit_zero else EXIT_OK


def _run_fixes(args, result, project, files, report_files, settings, errors) -> int:
    """``--fix`` / ``--diff``: apply the fixes with verification (see bufferlint.fixes.runner)."""

    def reanalyse(root: Path, all_files: list[Path], reported: list[Path]) -> AnalysisResult:
        again = analysis.analyze_project(root, all_files, reported, settings.vocab)
        again.findings = _reportable(again.findings, settings)
        return again

    outcome: FixOutcome = fix_project(
        result, project, files, report_files, reanalyse, unsafe=args.unsafe_fixes, write=not args.diff
    )
    final = outcome.result
    known = {e.path for e in errors}
    final.errors = errors + [e for e in final.errors if e.path not in known] + outcome.write_errors
    cwd = Path.cwd()
    for rejection in outcome.rejections:
        print(rejection.describe(display_path(rejection.finding.path, cwd)), file=sys.stderr)
    _warn_lost_fixes(args, final.findings)
    remaining = len(final.findings)
    if args.diff:
        sys.stdout.write(outcome.diff(lambda path: display_path(path, cwd)))
        print(f"Would fix {_count(outcome.fixed, 'finding')} ({remaining} remaining).", file=sys.stderr)
        if final.errors:
            for error in final.errors:
                print(f"{display_path(error.path, cwd)}: error: {error.message}", file=sys.stderr)
            return EXIT_ERROR
        return EXIT_FINDINGS if outcome.changed else EXIT_OK
    color = args.format == "text" and not args.no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()
    sys.stdout.write(REPORTERS[args.format](final, cwd, color=color, root=project.root))
    if args.format == "text":
        analysed = dataclasses.replace(final, errors=[e for e in final.errors if e not in outcome.write_errors])
        print(summary(analysed, len(report_files)), file=sys.stderr)
    unwritten = f" {_count(len(outcome.write_errors), 'fixed file')} could not be written." if outcome.write_errors else ""
    print(f"Fixed {_count(outcome.fixed, 'finding')} ({remaining} remaining).{unwritten}", file=sys.stderr)
    if final.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if final.findings and not args.exit_zero else EXIT_OK




def _apply_baseline(args: argparse.Namespace, result: AnalysisResult, root: Path, report_files: list[Path],
                    settings: Settings) -> list[str]:
    """--write-baseline / --baseline: leave only the findings to report in ``result``; return
    what to tell the user about it."""
    if not (args.baseline or args.write_baseline):
        return []
    prints = fingerprints(result.findings, root)
    try:
        if args.write_baseline:
            baseline.write(absolute(args.write_baseline), result.findings, prints, root, str(args.write_baseline))
            note = f"wrote {_count(len(result.findings), 'finding')} to the baseline {args.write_baseline}"
            result.findings = []
            return [note]
        checked = {relative_path(path, root) for path in report_files}
        outcome = baseline.apply(
            baseline.load(absolute(args.baseline), str(args.baseline)), result.findings, prints,
            lambda entry: entry.path in checked and settings.is_enabled(entry.rule),
        )
    except baseline.BaselineError as exc:
        raise UsageError(str(exc)) from None
    result.findings = outcome.new
    return [f"{_count(outcome.baselined, 'baselined finding')} not shown, {outcome.fixed} fixed"]


def _add_noqa(args: argparse.Namespace, result: AnalysisResult, root: Path) -> int:
    added = add_noqa(result.findings)
    for path, line in added.skipped:
        print(f"bufferlint: could not add a noqa directive at {relative_path(path, Path.cwd())}:{line}", file=sys.stderr)
    if not args.quiet:
        print(f"Added {_count(added.added, 'noqa directive')} to {_count(added.files, 'file')}.", file=sys.stderr)
    result.findings, result.errors = [], result.errors + added.errors
    if result.errors:
        sys.stdout.write(REPORTERS[args.format](result, Path.cwd(), root=root))
        return EXIT_ERROR
    return EXIT_FINDINGS if added.skipped and not args.exit_zero else EXIT_OK


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def _project_root(option: Path | None, paths: list[Path]) -> ProjectRoot:
    if option is None:
        return locate_project_root(paths)
    root = absolute(option)
    if not root.is_dir():
        raise UsageError(f"--project-root {option}: not a directory")
    return ProjectRoot(root, "--project-root")


def _apply_cli_rules(settings: Settings, args: argparse.Namespace) -> Settings:
    """``--select`` replaces the configured selection, ``--ignore`` adds to it (as in Ruff)."""
    changes = {}
    if args.select:
        changes["select"] = rule_selectors(_split_codes(args.select), "--select")
    if args.ignore:
        changes["ignore"] = settings.ignore + rule_selectors(_split_codes(args.ignore), "--ignore")
    if getattr(args, "max_file_size", None) is not None:
        changes["max_file_size"] = file_size(args.max_file_size, "--max-file-size")
    settings = dataclasses.replace(settings, **changes)
    if not any(settings.is_enabled(code) for code in RULES):
        # As Ruff: a selection that checks nothing is a mistake, not a clean result.
        where = "--select/--ignore" if args.select or args.ignore else (f"{settings.config_path}: [tool.bufferlint]" if settings.config_path else "select")
        raise UsageError(
            f"{where}: no rule is selected (select = {list(settings.select)}, ignore = {list(settings.ignore)}); "
            f"nothing would be checked (known rules: {', '.join(RULES)})"
        )
    return settings


def _split_codes(values: list[str]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def _reportable(findings: list[Finding], settings: Settings) -> list[Finding]:
    """Drop findings of rules not selected and findings a suppression comment covers."""
    sources: dict[Path, SourceFile | None] = {}
    kept = []
    for finding in findings:
        if not settings.is_enabled(finding.rule):
            continue
        if finding.path not in sources:
            source = read_source(finding.path)
            sources[finding.path] = source if isinstance(source, SourceFile) else None
        source = sources[finding.path]
        if source is None or not suppressed(finding, source.text):
            kept.append(finding)
    return kept


def show_rule(args: argparse.Namespace) -> int:
    try:
        rule = get_rule(args.code)
    except KeyError:
        raise UsageError(f"unknown rule {args.code!r} (known rules: {', '.join(RULES)})") from None
    print(f"# {rule.code} {rule.name}\n\n{rule.summary}\n\n{rule.doc}", end="")
    return EXIT_OK


def list_rules(args: argparse.Namespace) -> int:
    width = max(len(rule.name) for rule in RULES.values())
    for rule in RULES.values():
        print(f"{rule.code}  {rule.name:<{width}}  {rule.summary}")
    return EXIT_OK


@dataclasses.dataclass
class _Run:
    root: Path
    settings: Settings
    files: list[Path]
    report_files: list[Path]
    result: AnalysisResult
    errors: list  # path errors (missing, unlistable), also at the head of result.errors


def _analyse(args: argparse.Namespace) -> _Run:
    """The analysis a command asks for: scope, settings, then reportable findings."""
    paths = [absolute(p) for p in args.paths]
    located = _project_root(args.project_root, paths)
    root = located.path
    settings = _apply_cli_rules(load_settings(root, absolute(args.config) if args.config else None), args)
    set_max_bytes(settings.max_file_size)
    report_files, errors = expand_paths(paths, root, settings)
    result = AnalysisResult()
    files: list[Path] = []
    if report_files:
        files = sorted(set(discover(root, settings.excludes)) | set(report_files))
        with Progress(sys.stderr, enabled=not getattr(args, "quiet", False)) as progress:
            result = analysis.analyze_project(root, files, report_files, settings.vocab, progress=progress.callback)
    if getattr(args, "verbose", False):
        print(verbose_line(located, result.files_seen, result.files_parsed, len(report_files)), file=sys.stderr)
    result.errors[:0] = errors
    _warn_suppressions(args, report_files, result.findings, settings)
    result.findings = _reportable(result.findings, settings)
    return _Run(root, settings, files, report_files, result, errors)


def _warn_suppressions(args: argparse.Namespace, report_files: list[Path], findings: list[Finding],
                       settings: Settings) -> None:
    """``path:line:col: warning: ...`` on stderr for malformed directives and unknown codes,
    and with ``--warn-unused-noqa`` for directives that suppress nothing (``findings``: before
    suppression). They do not change the exit code."""
    if getattr(args, "quiet", False):
        return
    by_path: dict[Path, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    cwd = Path.cwd()
    for path in report_files:
        data = read_bytes(path)
        if isinstance(data, FileError) or not may_concern_bufferlint(data):
            continue
        source = read_source(path, data)
        if isinstance(source, SourceFile):
            warn_unused = getattr(args, "warn_unused_noqa", False)
            for line, column, message in directive_warnings(source.text, by_path.get(path, []), settings.is_enabled, warn_unused):
                print(f"{display_path(path, cwd)}:{line}:{column}: warning: {message}", file=sys.stderr)


def _show_settings(args: argparse.Namespace) -> int:
    """``check --show-settings``: the vocabulary in effect; warnings for project entries that
    no file mentions (exit 0: a listing, not a check)."""
    from bufferlint.show_settings import show_settings

    paths = [absolute(p) for p in args.paths]
    root = _project_root(args.project_root, paths).path
    settings = _apply_cli_rules(load_settings(root, absolute(args.config) if args.config else None), args)
    listing, warnings = show_settings(settings, discover(root, settings.excludes))
    sys.stdout.write(listing)
    for warning in warnings:
        print(f"bufferlint: warning: {warning}", file=sys.stderr)
    return EXIT_OK


def write_shim(args: argparse.Namespace) -> int:
    """``bufferlint shim``: patch exactly the functions that hand borrowed views to a sink,
    named as the application imports them; exit 2 when one has no importable name."""
    from bufferlint.shimgen import generate_shim, shim_targets

    run = _analyse(args)
    for error in run.result.errors:
        print(f"{error.path}: {error.message}", file=sys.stderr)
    trusted = args.project_root is not None or (run.root / "pyproject.toml").is_file()
    targets = shim_targets(run.result.findings, run.root, trusted)
    for function, reason in targets.unexpressible:
        print(f"bufferlint: error: cannot patch {function}: {reason}; not in the shim", file=sys.stderr)
    output = absolute(args.output)
    text = generate_shim(targets.answers, policy=args.policy, module_hint=output.stem, unexpressible=targets.unexpressible)
    write_atomic(output, text.encode("utf-8"))
    print(f"Wrote {args.output}: patches {_count(len(targets.answers), 'loader')} with policy {args.policy!r}.", file=sys.stderr)
    return EXIT_ERROR if run.result.errors or targets.unexpressible else EXIT_OK
