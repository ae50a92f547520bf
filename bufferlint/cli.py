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
What a check finds, and what fixing changes, comes from ``bufferlint.api`` (the same calls
an editor integration makes); this module turns arguments into its requests and renders
its reports, warnings and exit codes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Sequence

from bufferlint import __version__, api
from bufferlint.api import UsageError
from bufferlint.atomic import write_atomic
from bufferlint.catalog import RULES, get_rule
from bufferlint.config import OUTPUT_FORMATS
from bufferlint.discovery import ProjectRoot, absolute
from bufferlint.noqa import add_noqa
from bufferlint.progress import Progress, verbose_line
from bufferlint.reporters import REPORTERS, github, statistics
from bufferlint.reporters.base import count, display_path
from bufferlint.reporters.text import summary

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS_WITH_FIXES = frozenset({"json", "sarif", "rdjson", "rdjsonl"})
STATISTICS_FORMATS = ("full", "concise", "json")


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
    except UsageError as exc:
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
        allow_abbrev=False,  # as Ruff: `--out json` is an error, never `--output-file json`
    )
    parser.add_argument("--version", action="version", version=f"bufferlint {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="analyse files and report findings", allow_abbrev=False)
    check.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH",
                       help="files or directories to report on (default: .)")
    check.add_argument("--output-format", "--format", dest="output_format", choices=OUTPUT_FORMATS, metavar="FORMAT",
                       help="how findings are printed: full (the default: each finding with its trace), concise "
                            "(one line per finding), json, sarif, github, rdjson, rdjsonl (text: old name of full; "
                            "--format: old name of this option)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings (still 2 on errors)")
    check.add_argument("--project-root", type=Path, metavar="DIR",
                       help="the project the paths belong to (default: the nearest directory above them with a "
                            "pyproject.toml, setup.cfg or setup.py, else their git work tree)")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="print the project root and how many files were analysed and parsed (on stderr)")
    check.add_argument("--config", type=Path, metavar="PATH", help="pyproject.toml to read [tool.bufferlint] from")
    check.add_argument("--select", action="append", metavar="CODES",
                       help="comma-separated rule codes or prefixes to report (replaces the configured select)")
    check.add_argument("--extend-select", action="append", metavar="CODES",
                       help="comma-separated rule codes or prefixes to report in addition to the selected ones")
    check.add_argument("--ignore", action="append", metavar="CODES",
                       help="comma-separated rule codes or prefixes not to report (added to the configured ignore)")
    check.add_argument("--exclude", action="append", metavar="PATTERNS",
                       help="comma-separated file patterns not to analyse (replaces the configured exclude)")
    check.add_argument("--extend-exclude", action="append", metavar="PATTERNS",
                       help="comma-separated file patterns not to analyse, in addition to the excluded ones")
    check.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                       help="skip files git ignores (default: on)")
    check.add_argument("--force-exclude", action=argparse.BooleanOptionalAction, default=None,
                       help="apply the excludes to files named on the command line too, as pre-commit passes them "
                            "(default: off)")
    check.add_argument("--max-file-size", type=float, metavar="MIB",
                       help="do not analyse files larger than this many MiB (default: 5)")
    check.add_argument("--jobs", type=int, metavar="N",
                       help="processes the run may use (default: every CPU this process may use; 1: one process, "
                            "the same report)")
    check.add_argument("--no-color", action="store_true", help="never colour the output (it is only coloured on a TTY)")
    check.add_argument("--no-cache", action="store_true",
                       help="neither read nor write the cache (default: .bufferlint_cache/ in the project root)")
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

    rule = commands.add_parser("rule", help="show the documentation of one rule", allow_abbrev=False)
    rule.add_argument("code", help="rule code (BL001) or name")
    rule.set_defaults(handler=show_rule)

    rules = commands.add_parser("rules", help="list all rules", allow_abbrev=False)
    rules.set_defaults(handler=list_rules)

    shim = commands.add_parser("shim", help="write a start-up module that makes the flagged loaders safe at runtime",
                               allow_abbrev=False)
    shim.add_argument("paths", nargs="*", type=Path, default=[Path(".")], metavar="PATH")
    shim.add_argument("-o", "--output", type=Path, required=True, metavar="FILE", help="the module to write")
    shim.add_argument("--policy", choices=("sync", "copy", "raise"), default="sync",
                      help="what a borrowed submission becomes (default: sync, the upstream fix)")
    shim.add_argument("--project-root", type=Path, metavar="DIR")
    shim.add_argument("--config", type=Path, metavar="PATH")
    shim.set_defaults(handler=write_shim, select=None, ignore=None)

    server = commands.add_parser("server", help="run the language server on stdin/stdout (needs bufferlint[lsp])",
                                 allow_abbrev=False)
    server.set_defaults(handler=run_server)
    return parser


def run_check(args: argparse.Namespace) -> int:
    if args.show_settings:
        return _show_settings(args)
    args.format = _output_format(args)
    _check_report_options(args)
    options = _options(args, fixes=bool(args.fix or args.diff or args.statistics or args.format in FORMATS_WITH_FIXES))
    if args.fix or args.diff:
        return _run_fixes(args, options)
    with Progress(sys.stderr, enabled=not getattr(args, "quiet", False)) as progress:
        report = api.check(dataclasses.replace(options, progress=progress.callback))
    _warn_suppressions(report)
    if report.error is not None:
        raise UsageError(report.error)
    _say_verbose(args, report)
    _warn_lost_fixes(args, report)
    return _report(args, report)


def _output_format(args: argparse.Namespace) -> str:
    """``--output-format``, else the configuration's ``output-format``, else ``full``
    (``text`` is full's old name). A project that cannot be opened is reported by the check."""
    chosen = args.output_format
    if chosen is None:
        project = api.open_project(_options(args))
        chosen = project.settings.output_format if not isinstance(project, str) else None
    return "full" if chosen in (None, "text") else chosen


def _say_verbose(args: argparse.Namespace, report: api.Report) -> None:
    """``-v``: the project root and why, how many files were analysed, parsed and reported on,
    and how the cache served the run."""
    if getattr(args, "verbose", False) and report.project is not None:
        root = ProjectRoot(report.project.root, report.project.reason)
        cache = report.cache or "not used (--no-cache)"
        print(verbose_line(root, report.files_seen, report.files_parsed, len(report.report_files), cache), file=sys.stderr)


def _options(args: argparse.Namespace, fixes: bool = False) -> api.CheckOptions:
    """The API request a command line asks for."""
    return api.CheckOptions(
        paths=tuple(args.paths),
        project_root=args.project_root,
        config=args.config,
        select=_split_codes(args.select) if args.select else None,
        extend_select=_split(getattr(args, "extend_select", None)),
        ignore=_split_codes(args.ignore) if args.ignore else None,
        exclude=_split(getattr(args, "exclude", None)),
        extend_exclude=_split(getattr(args, "extend_exclude", None)),
        respect_gitignore=getattr(args, "respect_gitignore", None),
        force_exclude=getattr(args, "force_exclude", None),
        max_file_size=getattr(args, "max_file_size", None),
        jobs=getattr(args, "jobs", None),
        baseline=getattr(args, "baseline", None),
        write_baseline=getattr(args, "write_baseline", None),
        fixes=fixes,
        suppression_warnings=not getattr(args, "quiet", False),
        warn_unused_noqa=getattr(args, "warn_unused_noqa", False),
        cache=not getattr(args, "no_cache", False),
    )


def _warn_lost_fixes(args: argparse.Namespace, report: api.Report) -> None:
    """Say on stderr which findings have no fix because their file could not be parsed for
    fixing. JSON and SARIF carry it in the report (``fix_error``, tool notifications)."""
    if args.format in ("json", "sarif") and not args.statistics and not args.diff:
        return
    cwd = Path.cwd()
    for finding in report.lost_fixes:
        span = finding.span
        print(f"{display_path(finding.path, cwd)}:{span.line}:{span.column}: warning: no fix for {finding.rule}: "
              f"{finding.fix_error}", file=sys.stderr)


def _warn_suppressions(report: api.Report) -> None:
    """``path:line:col: warning: ...`` on stderr for malformed directives and unknown codes,
    and with ``--warn-unused-noqa`` for directives that suppress nothing. They do not change
    the exit code."""
    cwd = Path.cwd()
    for warning in report.suppression_warnings:
        print(f"{display_path(warning.path, cwd)}:{warning.line}:{warning.column}: warning: {warning.message}",
              file=sys.stderr)


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
    if args.statistics and args.format not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics prints {', '.join(STATISTICS_FORMATS)}, not {args.format}")


def _report(args: argparse.Namespace, report: api.Report) -> int:
    """--add-noqa, rendering and the exit code, once the findings are final."""
    notes = [report.baseline_note] if report.baseline_note else []
    if args.add_noqa:
        return _add_noqa(args, report)

    cwd = Path.cwd()
    to_stdout = args.output_file is None
    color = to_stdout and _color(args)
    if args.statistics:
        shown = statistics.render_json if args.format == "json" else statistics.render_text
        output = shown(report, _root(report), unsafe=args.unsafe_fixes)
    else:
        output = REPORTERS[args.format](report, cwd, color=color, root=_root(report))
    if to_stdout:
        sys.stdout.write(output)
    else:
        try:
            absolute(args.output_file).write_text(output, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--output-file {args.output_file}: cannot write: {exc.strerror or exc}") from None
    for notice in report.notices:  # a limit of the analysis is never silent, even with --quiet
        print(f"bufferlint: warning: {notice}", file=sys.stderr)
    line = summary(report, len(report.report_files), _fixable(args, report))
    line = f"{line} {notes[0][0].upper()}{notes[0][1:]}." if notes else line
    if not args.quiet:  # every format: the report is on stdout (or in a file), this line on stderr
        print(line, file=sys.stderr)
    if args.format == "github" and not args.statistics:
        _write_job_summary(report, cwd, line)
    return _exit_code(args, report)


def _write_job_summary(report: api.Report, cwd: Path, headline: str) -> None:
    """``github``: every finding in the job summary, when the step has one
    (``$GITHUB_STEP_SUMMARY``): annotations beyond GitHub's limit are not shown."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as summary_file:
            summary_file.write(github.job_summary(report, cwd, headline))
    except OSError as exc:
        print(f"bufferlint: warning: cannot write the job summary to {target}: {exc.strerror or exc}", file=sys.stderr)


def _fixable(args: argparse.Namespace, report: api.Report) -> tuple[int, int, bool] | None:
    """(fixes ``--fix`` would apply under these flags, unsafe ones it would apply only with
    ``--unsafe-fixes``, whether unsafe fixes are on); None when no fix was planned."""
    if not (args.fix or args.diff or args.statistics or args.format in FORMATS_WITH_FIXES):
        return None
    safe, every = len(statistics.fixable(report)), len(statistics.fixable(report, unsafe=True))
    return (every, 0, True) if args.unsafe_fixes else (safe, every - safe, False)


def _color(args: argparse.Namespace) -> bool:
    """Colour text written to a terminal, unless told not to (``--no-color``, ``NO_COLOR``)."""
    return args.format in ("full", "concise") and not args.no_color and "NO_COLOR" not in os.environ and sys.stdout.isatty()


def _exit_code(args: argparse.Namespace, report: api.Report) -> int:
    if report.errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if report.findings and not args.exit_zero else EXIT_OK


def _run_fixes(args: argparse.Namespace, options: api.CheckOptions) -> int:
    """``--fix`` / ``--diff``: apply the fixes with verification (see bufferlint.fixes.runner)."""
    with Progress(sys.stderr, enabled=not args.quiet) as progress:
        fixed = api.fix(dataclasses.replace(options, progress=progress.callback), unsafe=args.unsafe_fixes,
                        write=not args.diff, verify_remaining=True)
    if isinstance(fixed, api.Report):  # the run could not start
        raise UsageError(fixed.error)
    final, outcome = fixed.report, fixed.outcome
    _warn_suppressions(final)
    cwd = Path.cwd()
    for rejection in outcome.rejections:
        print(rejection.describe(display_path(rejection.finding.path, cwd)), file=sys.stderr)
    _warn_lost_fixes(args, final)
    remaining = len(final.findings)
    if args.diff:
        sys.stdout.write(outcome.diff(lambda path: display_path(path, cwd)))
        print(f"Would fix {_fixed(outcome)} ({remaining} remaining).", file=sys.stderr)
        if final.errors:
            for error in final.errors:
                print(f"{display_path(error.path, cwd)}: error: {error.message}", file=sys.stderr)
            return EXIT_ERROR
        return EXIT_FINDINGS if outcome.changed else EXIT_OK
    sys.stdout.write(REPORTERS[args.format](final, cwd, color=_color(args), root=_root(final)))
    analysed = dataclasses.replace(final, errors=[e for e in final.errors if e not in outcome.write_errors])
    line = summary(analysed, len(final.report_files), _fixable(args, final))
    if not args.quiet:
        print(line, file=sys.stderr)
    if args.format == "github":
        _write_job_summary(final, cwd, line)
    unwritten = f" {count(len(outcome.write_errors), 'fixed file')} could not be written." if outcome.write_errors else ""
    print(f"Fixed {_fixed(outcome)} ({remaining} remaining).{unwritten}", file=sys.stderr)
    return _exit_code(args, final)


def _fixed(outcome) -> str:
    """``2 findings``, or ``2 findings with 1 fix`` when fixes removed other findings too (a
    guard's fix removes the findings at every call it decides; the calls its finding stands
    for are not counted: ``fixes.runner.fixed_count``); ``--statistics`` counts fixes."""
    found = count(outcome.fixed, "finding")
    return f"{found} with {count(outcome.applied, 'fix', 'fixes')}" if outcome.fixed > outcome.applied else found


def _add_noqa(args: argparse.Namespace, report: api.Report) -> int:
    added = add_noqa(report.findings)
    for path, line in added.skipped:
        print(f"bufferlint: could not add a noqa directive at {display_path(path, Path.cwd())}:{line}", file=sys.stderr)
    if not args.quiet:
        print(f"Added {count(added.added, 'noqa directive')} to {count(added.files, 'file')}.", file=sys.stderr)
    report.findings, report.errors = [], report.errors + added.errors
    if report.errors:
        sys.stdout.write(REPORTERS[args.format](report, Path.cwd(), root=_root(report)))
        return EXIT_ERROR
    return EXIT_FINDINGS if added.skipped and not args.exit_zero else EXIT_OK


def _split_codes(values: list[str]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def _split(values: list[str] | None) -> list[str] | None:
    """A repeatable comma-separated option's values (None: not given)."""
    return _split_codes(values) if values else None


def run_server(args: argparse.Namespace) -> int:
    """``bufferlint server``: the language server (docs/editors.md). pygls comes with the
    optional extra ``lsp``, so without it this is a usage error, not a traceback."""
    try:
        from bufferlint.server.app import serve
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs"):
            raise
        raise UsageError(f"`bufferlint server` needs pygls: pip install 'bufferlint[lsp]' ({exc})") from None
    return serve()


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


def _show_settings(args: argparse.Namespace) -> int:
    """``check --show-settings``: the vocabulary in effect; warnings for project entries that
    no file mentions (exit 0: a listing, not a check)."""
    from bufferlint.show_settings import show_settings

    project = api.open_project(_options(args))
    if isinstance(project, str):
        raise UsageError(project)
    listing, warnings = show_settings(project.settings, project.files())
    sys.stdout.write(listing)
    for warning in warnings:
        print(f"bufferlint: warning: {warning}", file=sys.stderr)
    return EXIT_OK


def _root(report: api.Report) -> Path:
    """The project root of a report that has findings to show (every report without an
    ``error`` has its project)."""
    assert report.project is not None
    return report.project.root


def write_shim(args: argparse.Namespace) -> int:
    """``bufferlint shim``: patch exactly the functions that hand borrowed views to a sink,
    named as the application imports them; exit 2 when one has no importable name."""
    from bufferlint.shimgen import generate_shim, shim_targets

    report = api.check(_options(args))
    _warn_suppressions(report)
    if report.error is not None:
        raise UsageError(report.error)
    for error in report.errors:
        print(f"{error.path}: {error.message}", file=sys.stderr)
    root = _root(report)
    trusted = args.project_root is not None or (root / "pyproject.toml").is_file()
    # every consumer site: a loader call a guard's BL002 stands for runs through that broken
    # guard, so it is patched like any other (one finding per bug is for reading, not patching)
    targets = shim_targets(report.every_site(), root, trusted)
    for function, reason in targets.unexpressible:
        print(f"bufferlint: error: cannot patch {function}: {reason}; not in the shim", file=sys.stderr)
    output = absolute(args.output)
    text = generate_shim(targets.answers, policy=args.policy, module_hint=output.stem, unexpressible=targets.unexpressible)
    write_atomic(output, text.encode("utf-8"))
    print(f"Wrote {args.output}: patches {count(len(targets.answers), 'loader')} with policy {args.policy!r}.", file=sys.stderr)
    return EXIT_ERROR if report.errors or targets.unexpressible else EXIT_OK
