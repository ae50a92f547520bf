"""The command-line contract: arguments, exit codes, output formats, error handling.

In-process tests replace ``bufferlint.analysis.analyze_project`` with a fake returning a
chosen AnalysisResult: they test the CLI layer (scope, filtering, suppressions, rendering,
exit codes) independently of the engine. Subprocess tests run ``python -m bufferlint``
for what users and pre-commit see; some run the real engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

import bufferlint.analysis
from bufferlint import cli
from bufferlint.catalog import RULES
from bufferlint.findings import AnalysisResult, FileError, Finding, Span, TraceStep
from bufferlint.packs import Vocabulary
from bufferlint.source import parse_source, read_source
from conftest import REPO, run_cli, write

FINDING_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version", "findings", "errors", "notices", "groups"],
    "properties": {
        "version": {"const": 1},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule", "path", "line", "column", "end_line", "end_column", "message", "function", "trace", "fix",
                             "fix_error", "severity", "group", "other_paths"],
                "properties": {
                    "rule": {"type": "string", "pattern": "^BL[0-9]{3}$"},
                    "path": {"type": "string", "pattern": "^[^\\\\]+$"},
                    "line": {"type": "integer", "minimum": 1},
                    "column": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                    "end_column": {"type": "integer", "minimum": 1},
                    "message": {"type": "string"},
                    "function": {"type": "string"},
                    "trace": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["path", "line", "note"],
                            "properties": {
                                "path": {"type": "string"},
                                "line": {"type": "integer", "minimum": 1},
                                "note": {"type": "string"},
                            },
                        },
                    },
                    "fix": {
                        "oneOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["applicability", "message", "edits"],
                                "properties": {
                                    "applicability": {"enum": ["safe", "unsafe"]},
                                    "message": {"type": "string"},
                                    "edits": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "additionalProperties": False,
                                            "required": ["line", "column", "end_line", "end_column", "replacement"],
                                            "properties": {
                                                "line": {"type": "integer", "minimum": 1},
                                                "column": {"type": "integer", "minimum": 1},
                                                "end_line": {"type": "integer", "minimum": 1},
                                                "end_column": {"type": "integer", "minimum": 1},
                                                "replacement": {"type": "string"},
                                            },
                                        },
                                    },
                                },
                            },
                        ]
                    },
                    "fix_error": {"type": ["string", "null"]},
                    "severity": {"enum": ["error", "warning"]},
                    "group": {"type": "string", "pattern": "^[0-9a-f]{20}$"},
                    "other_paths": {"type": "integer", "minimum": 0},
                },
            },
        },
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "message"],
                "properties": {"path": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "notices": {"type": "array", "items": {"type": "string"}},
        "groups": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "source", "versions", "fix", "findings"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[0-9a-f]{20}$"},
                    "source": {
                        "oneOf": [
                            {"type": "null"},
                            {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["path", "line", "note"],
                                "properties": {
                                    "path": {"type": "string"},
                                    "line": {"type": "integer", "minimum": 1},
                                    "note": {"type": "string"},
                                },
                            },
                        ]
                    },
                    "versions": {"type": ["string", "null"]},
                    "fix": {"type": ["string", "null"]},
                    "findings": {"type": "integer", "minimum": 1},
                },
            },
        },
    },
}

LOADER = """\
from concurrent.futures import ThreadPoolExecutor


def load(weights, params):
    with ThreadPoolExecutor() as executor:
        for name, w in weights:
            executor.submit(params[name].copy_, w)
"""

MESSAGE = "borrowed value 'w' reaches ThreadPoolExecutor.submit without a guard"


def make_finding(path: Path, line: int = 7, rule: str = "BL001", trace: tuple[TraceStep, ...] = ()) -> Finding:
    return Finding(rule=rule, span=Span(path, line, 13, line, 51), message=MESSAGE, function="pkg.loader:load", trace=trace)


class FakeEngine:
    """Stands in for analyze_project: records its arguments and returns ``make(report_files)``."""

    def __init__(self, make=lambda report_files: AnalysisResult()) -> None:
        self.make = make
        self.calls: list[tuple] = []

    def __call__(self, root: Path, files, report_files, vocab: Vocabulary, cache=None, progress=None,
                 check_files=None) -> AnalysisResult:
        self.calls.append((root, list(files), list(report_files), vocab))
        return self.make(list(report_files))


def reading_engine(report_files: list[Path]) -> AnalysisResult:
    """A minimal engine: reads and parses each file the way the real one does, and reports a
    BL001 on every line that calls ``.submit(``."""
    result = AnalysisResult()
    for path in report_files:
        source = read_source(path)
        tree = parse_source(source) if not isinstance(source, FileError) else source
        if isinstance(tree, FileError):
            result.errors.append(tree)
            continue
        for number, text in enumerate(source.text.splitlines(), 1):
            if ".submit(" in text:
                result.findings.append(make_finding(path, number))
    return result


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "pkg/__init__.py": "",
        "pkg/loader.py": LOADER,
        "pkg/stream.py": "def stream():\n    yield 1\n",
        "pkg/types.pyi": "x: int\n",
        "build/lib/pkg/loader.py": LOADER,
        "README.md": "demo\n",
    })
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("BUFFERLINT_DEBUG", raising=False)
    return tmp_path


def use_engine(monkeypatch: pytest.MonkeyPatch, engine) -> FakeEngine:
    fake = engine if isinstance(engine, FakeEngine) else FakeEngine(engine)
    monkeypatch.setattr(bufferlint.analysis, "analyze_project", fake)
    return fake


# ---------------------------------------------------------------------------
# Scope: what the engine sees and what it reports on


def test_one_file_reports_that_file_but_analyses_the_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "pkg/loader.py"]) == 0
    [(root, files, report_files, vocab)] = fake.calls
    assert root == project
    assert files == [project / "pkg/__init__.py", project / "pkg/loader.py", project / "pkg/stream.py", project / "pkg/types.pyi"]
    assert report_files == [project / "pkg/loader.py"]
    assert "_sglang_runai_streamer_tensor" in vocab.markers


def test_directory_argument_reports_its_python_files(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "."]) == 0
    [(_, files, report_files, _)] = fake.calls
    assert report_files == files  # build/ is excluded from both


def test_no_path_means_current_directory(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    monkeypatch.chdir(project / "pkg")
    assert cli.main(["check"]) == 0
    [(root, _, report_files, _)] = fake.calls
    assert root == project and project / "pkg/stream.py" in report_files


def test_explicitly_named_excluded_file_is_analysed(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "build/lib/pkg/loader.py"]) == 0
    [(_, files, report_files, _)] = fake.calls
    assert report_files == [project / "build/lib/pkg/loader.py"]
    assert project / "build/lib/pkg/loader.py" in files


def test_config_reaches_the_engine(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(project, {"pyproject.toml": '[tool.bufferlint]\nmarkers = ["_ring_view"]\nextend-exclude = ["stream.py"]\n'})
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "pkg/loader.py"]) == 0
    [(_, files, _, vocab)] = fake.calls
    assert "_ring_view" in vocab.markers and "_sglang_runai_streamer_tensor" in vocab.markers
    assert project / "pkg/stream.py" not in files


def test_project_root_option(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "--project-root", "pkg", "pkg/loader.py"]) == 0
    [(root, files, _, _)] = fake.calls
    assert root == project / "pkg"
    assert project / "build/lib/pkg/loader.py" not in files and len(files) == 4


def test_project_root_must_be_a_directory(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "--project-root", "nope", "pkg"]) == 2
    assert capsys.readouterr().err == "bufferlint: error: --project-root nope: not a directory\n"


def test_explicit_config(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(project, {"ci/bufferlint.toml": '[tool.bufferlint]\nmarkers = ["_from_ci"]\n'})
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "--config", "ci/bufferlint.toml", "pkg"]) == 0
    assert "_from_ci" in fake.calls[0][3].markers


def test_engine_not_called_when_nothing_to_report(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "nope.py"]) == 2
    assert fake.calls == []
    out, err = capsys.readouterr()
    assert out == "nope.py: error: no such file or directory\n"
    assert err == "No findings in 0 files. 1 path could not be analysed.\n"


# ---------------------------------------------------------------------------
# Output and exit codes


TRACE = (
    TraceStep(Path("pkg/stream.py"), 2, "yields a view of the streamer's reused buffer"),
    TraceStep(Path("pkg/loader.py"), 6, "bound to 'w'"),
    TraceStep(Path("pkg/loader.py"), 7, "passed to ThreadPoolExecutor.submit"),
)


def test_text_format(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_engine(monkeypatch, lambda files: AnalysisResult(findings=[make_finding(project / "pkg/loader.py", trace=TRACE)]))
    assert cli.main(["check", "pkg/loader.py"]) == 1
    out, err = capsys.readouterr()
    assert out == (
        f"pkg/loader.py:7:13: BL001 {MESSAGE}\n"
        "    pkg/stream.py:2: yields a view of the streamer's reused buffer\n"
        "    pkg/loader.py:6: bound to 'w'\n"
        "    pkg/loader.py:7: passed to ThreadPoolExecutor.submit\n"
    )
    assert err == "Found 1 finding (1 BL001) in 1 file.\n"


def test_summary_counts_per_rule(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    loader = project / "pkg/loader.py"
    use_engine(monkeypatch, lambda files: AnalysisResult(
        findings=[make_finding(loader, 7), make_finding(loader, 6, "BL002"), make_finding(loader, 5)]
    ))
    assert cli.main(["check", "pkg"]) == 1
    out, err = capsys.readouterr()
    assert [line.split(":")[1] for line in out.splitlines()] == ["5", "6", "7"]  # sorted by position
    assert err == "Found 3 findings (2 BL001, 1 BL002) in 4 files.\n"


def test_clean_run(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "pkg"]) == 0
    assert capsys.readouterr() == ("", "All checks passed (4 files).\n")


def test_json_format(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_engine(monkeypatch, lambda files: AnalysisResult(
        findings=[make_finding(project / "pkg/loader.py", trace=TRACE)],
        errors=[FileError(project / "pkg/stream.py", "syntax error at line 1, column 1: invalid syntax")],
    ))
    assert cli.main(["check", "--format", "json", "pkg"]) == 2
    out, err = capsys.readouterr()
    report = json.loads(out)
    jsonschema.validate(report, FINDING_SCHEMA)
    fix = report["findings"][0].pop("fix")  # null, or whatever fix the fixers attach (rendering: test_formats.py)
    assert fix is None or fix["edits"]
    group = report["findings"][0].pop("group")  # no producer step in this trace: a group of its own
    assert report["groups"] == [{"id": group, "source": None, "versions": None, "fix": None, "findings": 1}]
    assert report["findings"] == [{
        "rule": "BL001", "path": "pkg/loader.py", "line": 7, "column": 13, "end_line": 7, "end_column": 51,
        "message": MESSAGE, "function": "pkg.loader:load", "fix_error": None, "severity": "error", "other_paths": 0,
        "trace": [
            {"path": "pkg/stream.py", "line": 2, "note": "yields a view of the streamer's reused buffer"},
            {"path": "pkg/loader.py", "line": 6, "note": "bound to 'w'"},
            {"path": "pkg/loader.py", "line": 7, "note": "passed to ThreadPoolExecutor.submit"},
        ],
    }]
    assert report["errors"] == [{"path": "pkg/stream.py", "message": "syntax error at line 1, column 1: invalid syntax"}]
    # stdout is the whole report; the one-line summary goes to stderr, as with every format
    assert err == "Found 1 finding (1 BL001) in 4 files. 1 path could not be analysed.\n"


def test_json_paths_outside_cwd_are_absolute(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_engine(monkeypatch, lambda files: AnalysisResult(findings=[make_finding(project / "pkg/loader.py")]))
    monkeypatch.chdir(project / "pkg")
    assert cli.main(["check", "--format", "json", "loader.py"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["path"] == "loader.py"
    monkeypatch.chdir(project / "build")
    assert cli.main(["check", "--format", "json", "../pkg/loader.py"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["path"] == (project / "pkg/loader.py").as_posix()


def test_exit_zero(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_engine(monkeypatch, lambda files: AnalysisResult(findings=[make_finding(project / "pkg/loader.py")]))
    assert cli.main(["check", "--exit-zero", "pkg/loader.py"]) == 0
    assert cli.main(["check", "--exit-zero", "pkg/loader.py", "missing.py"]) == 2


def test_per_file_errors_do_not_stop_other_files(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    write(project, {
        "pkg/broken.py": "def f(:\n",
        "pkg/latin.py": "s = 'caf\xe9'\n".encode("latin-1"),
        "pkg/binary.py": b"x = 1\0\n",
    })
    (project / "pkg/dangling.py").symlink_to(project / "gone.py")
    use_engine(monkeypatch, reading_engine)
    assert cli.main(["check", "pkg"]) == 2
    out, err = capsys.readouterr()
    assert out == (
        f"pkg/loader.py:7:13: BL001 {MESSAGE}\n"
        "pkg/binary.py: error: contains a NUL byte (binary file?)\n"
        "pkg/broken.py: error: syntax error at line 1, column 7: invalid syntax\n"
        "pkg/dangling.py: error: cannot read file: No such file or directory\n"
        "pkg/latin.py: error: cannot decode as utf-8 at line 1 (byte offset 8: invalid continuation byte); "
        "declare the encoding with a PEP 263 coding comment\n"
    )
    assert err == "Found 1 finding (1 BL001) in 8 files. 4 paths could not be analysed.\n"


# ---------------------------------------------------------------------------
# Rule selection and suppressions


@pytest.mark.parametrize(
    ("config", "args", "reported"),
    [
        ("", [], ["BL001", "BL002"]),
        ("", ["--select", "BL001"], ["BL001"]),
        ("", ["--select", "BL001,BL002"], ["BL001", "BL002"]),
        ("", ["--ignore", "BL001"], ["BL002"]),
        ('select = ["BL002"]', [], ["BL002"]),
        ('select = ["BL002"]', ["--select", "BL001"], ["BL001"]),  # --select replaces
        ('ignore = ["BL002"]', ["--ignore", "BL001"], []),  # --ignore adds
        ('ignore = ["BL"]', ["--select", "BL001"], ["BL001"]),  # more specific wins
    ],
)
def test_rule_selection(project: Path, monkeypatch: pytest.MonkeyPatch, capsys, config: str, args: list, reported: list) -> None:
    write(project, {"pyproject.toml": f"[tool.bufferlint]\n{config}\n"})
    loader = project / "pkg/loader.py"
    use_engine(monkeypatch, lambda files: AnalysisResult(findings=[make_finding(loader, 6, "BL002"), make_finding(loader, 7)]))
    assert cli.main(["check", *args, "pkg/loader.py"]) == (1 if reported else 0)
    assert sorted(line.split()[1] for line in capsys.readouterr().out.splitlines()) == reported


def test_bad_select_option(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", "--select", "BL001,F401", "pkg"]) == 2
    assert capsys.readouterr().err == "bufferlint: error: --select: unknown rule code or prefix 'F401' (known rules: BL001, BL002, BL003, BL004, BL005, BL006)\n"
    assert fake.calls == []


@pytest.mark.parametrize(
    ("config", "args", "where"),
    [
        ("", ["--select", ""], "--select/--ignore"),
        ("", ["--select", ","], "--select/--ignore"),
        ("", ["--ignore", "BL"], "--select/--ignore"),
        ("select = []", [], "{root}/pyproject.toml: [tool.bufferlint]"),
        ('select = ["BL001"]\nignore = ["BL001"]', [], "{root}/pyproject.toml: [tool.bufferlint]"),
    ],
)
def test_a_selection_of_no_rule_is_a_usage_error(project: Path, monkeypatch: pytest.MonkeyPatch, capsys, config: str,
                                                  args: list, where: str) -> None:
    """As in Ruff: turning every rule off is a mistake to report, not a clean run (exit 2)."""
    write(project, {"pyproject.toml": f"[tool.bufferlint]\n{config}\n"})
    fake = use_engine(monkeypatch, FakeEngine())
    assert cli.main(["check", *args, "pkg"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bufferlint: error: {where.format(root=project)}: no rule is selected"), err
    assert fake.calls == []


def test_suppressions_are_applied(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    write(project, {"pkg/loader.py": LOADER.replace("params[name].copy_, w)", "params[name].copy_, w)  # noqa: BL001")})
    loader = project / "pkg/loader.py"
    use_engine(monkeypatch, lambda files: AnalysisResult(findings=[make_finding(loader, 7), make_finding(loader, 7, "BL002")]))
    assert cli.main(["check", "pkg/loader.py"]) == 1
    assert [line.split()[1] for line in capsys.readouterr().out.splitlines()] == ["BL002"]


# ---------------------------------------------------------------------------
# Colour


def test_colour_only_on_a_tty(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_engine(monkeypatch, lambda files: AnalysisResult(findings=[make_finding(project / "pkg/loader.py", trace=TRACE)]))
    cli.main(["check", "pkg/loader.py"])
    assert "\x1b[" not in capsys.readouterr().out

    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")  # the terminal's width: the message is not wrapped
    cli.main(["check", "pkg/loader.py"])
    out = capsys.readouterr().out
    assert "\x1b[1;31mBL001\x1b[0m" in out
    assert out.replace("\x1b[1m", "").replace("\x1b[1;31m", "").replace("\x1b[2m", "").replace("\x1b[0m", "").startswith(
        f"pkg/loader.py:7:13: BL001 {MESSAGE}\n    pkg/stream.py:2:"
    )

    cli.main(["check", "--no-color", "pkg/loader.py"])
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    cli.main(["check", "pkg/loader.py"])
    assert "\x1b[" not in capsys.readouterr().out
    monkeypatch.delenv("NO_COLOR")
    cli.main(["check", "--format", "json", "pkg/loader.py"])
    assert "\x1b[" not in capsys.readouterr().out


# ---------------------------------------------------------------------------
# Internal errors


def test_internal_error_is_one_line(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def broken(files):
        raise RuntimeError("summary table overflow")

    use_engine(monkeypatch, broken)
    assert cli.main(["check", "pkg"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "bufferlint: internal error: RuntimeError: summary table overflow (set BUFFERLINT_DEBUG=1 for a traceback)\n"


def test_debug_reraises(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(files):
        raise RuntimeError("summary table overflow")

    use_engine(monkeypatch, broken)
    monkeypatch.setenv("BUFFERLINT_DEBUG", "1")
    with pytest.raises(RuntimeError, match="summary table overflow"):
        cli.main(["check", "pkg"])


def test_interrupt(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    def interrupted(files):
        raise KeyboardInterrupt

    use_engine(monkeypatch, interrupted)
    assert cli.main(["check", "pkg"]) == 130
    assert capsys.readouterr().err == "bufferlint: interrupted\n"


def test_main_returns_argparse_exit_codes_instead_of_raising(capsys) -> None:
    assert cli.main(["check", "--format", "xml"]) == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err
    assert cli.main(["rules", "--help"]) == 0


# ---------------------------------------------------------------------------
# Subprocess: what a user's shell and pre-commit see (no engine needed)


def test_rules_lists_every_rule(tmp_path: Path) -> None:
    proc = run_cli("rules", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [[r.code, r.name] for r in RULES.values()]
    assert all(line.endswith(rule.summary) for line, rule in zip(lines, RULES.values()))


def test_rule_prints_its_docs(tmp_path: Path) -> None:
    proc = run_cli("rule", "BL001", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# BL001 borrowed-value-to-async-sink\n\nborrowed value reaches an async sink without a guard\n")
    assert proc.stdout.endswith(RULES["BL001"].doc)
    assert run_cli("rule", "guard-ignores-marker", cwd=tmp_path).stdout.startswith("# BL002 ")


@pytest.mark.parametrize(
    ("code", "title"),
    [
        ("BL003", "# BL003 borrowed-view-outlives-step\n\nborrowed view outlives its step\n"),
        ("bl004", "# BL004 non-blocking-copy-from-borrowed-view\n\nnon-blocking device copy from a borrowed view\n"),
        ("borrowed-view-outlives-step", "# BL003 "),
    ],
)
def test_rule_prints_the_new_rules(tmp_path: Path, code: str, title: str) -> None:
    proc = run_cli("rule", code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(title)
    assert proc.stdout.endswith(RULES[title.split()[1]].doc)


def test_rules_lists_the_new_rules(tmp_path: Path) -> None:
    out = run_cli("rules", cwd=tmp_path).stdout
    assert [line.split()[0] for line in out.splitlines()] == ["BL001", "BL002", "BL003", "BL004", "BL005", "BL006"]
    assert "BL003  borrowed-view-outlives-step" in out or "BL003 borrowed-view-outlives-step" in out


def test_unknown_rule(tmp_path: Path) -> None:
    proc = run_cli("rule", "BL999", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "bufferlint: error: unknown rule 'BL999' (known rules: BL001, BL002, BL003, BL004, BL005, BL006)\n"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    for args in ([], ["check", "--format", "xml", "."], ["lint", "."]):
        proc = run_cli(*args, cwd=tmp_path)
        assert proc.returncode == 2, args
        assert "usage: bufferlint" in proc.stderr and "Traceback" not in proc.stderr


def test_version(tmp_path: Path) -> None:
    proc = run_cli("--version", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "bufferlint 0.1.0\n")


def test_missing_path_json(tmp_path: Path) -> None:
    proc = run_cli("check", "--format", "json", "nope.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert json.loads(proc.stdout) == {
        "version": 1, "findings": [], "errors": [{"path": "nope.py", "message": "no such file or directory"}], "notices": [],
        "groups": [],
    }


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"pyproject.toml": "[tool.bufferlint\n"}, "{root}/pyproject.toml: invalid TOML (Expected ']' at the end of a table declaration (at line 1, column 17))"),
        ({"pyproject.toml": "[tool.bufferlint]\nsinks = 3\n"}, "{root}/pyproject.toml: [tool.bufferlint]: 'sinks' must be an array of tables ([[sinks]])"),
        ({"pyproject.toml": "[tool.bufferlint]\nmarker = ['_x']\n"}, "{root}/pyproject.toml: [tool.bufferlint]: unknown key(s) 'marker' (allowed: "),
        ({"pyproject.toml": "[tool.bufferlint]\nrule-packs = ['p.toml']\n", "p.toml": "markers = 'x'\n"}, "{root}/p.toml: 'markers' must be a list of strings"),
        ({"pyproject.toml": "[tool.bufferlint]\nrule-packs = ['p.toml']\n", "p.toml": "[[sources]\n"}, "{root}/p.toml: invalid TOML ("),
        ({"pyproject.toml": "[tool.bufferlint]\nselect = ['BL9']\n"}, "{root}/pyproject.toml: [tool.bufferlint] select: unknown rule code or prefix 'BL9'"),
    ],
    ids=["invalid-toml", "invalid-inline-pack", "unknown-key", "invalid-pack", "invalid-pack-toml", "bad-select"],
)
def test_config_errors_stop_the_run(tmp_path: Path, files: dict, message: str) -> None:
    write(tmp_path, {**files, "a.py": "x = 1\n"})
    proc = run_cli("check", "a.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("bufferlint: error: " + message.format(root=tmp_path))
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_pre_commit_hook_definition() -> None:
    hooks = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    hook = hooks["bufferlint"]  # (bufferlint-fix: see test_fixes.py)
    assert {k: hook[k] for k in ("id", "name", "entry", "language", "types_or", "require_serial")} == {
        "id": "bufferlint",
        "name": "bufferlint",
        "entry": "bufferlint check",
        "language": "python",
        "types_or": ["python", "pyi"],
        "require_serial": True,
    }
    # pre-commit appends the staged files to the entry: that must parse as a check run
    args = cli.build_parser().parse_args([*hook["entry"].split()[1:], "a.py", "b.pyi"])
    assert args.handler is cli.run_check and args.paths == [Path("a.py"), Path("b.pyi")]


# ---------------------------------------------------------------------------
# Subprocess with the real engine


def test_real_engine_bad_files_are_listed_and_the_rest_analysed(tmp_path: Path) -> None:
    write(tmp_path, {
        "pyproject.toml": "[project]\nname = 'demo'\n",
        "good.py": "x = 1\n",
        "syntax.py": "def f(:\n    pass\n",
        "latin.py": "s = 'caf\xe9'\n".encode("latin-1"),
        "nul.py": b"x = 1\0\n",
    })
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    proc = run_cli("check", "--format", "json", ".", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    report = json.loads(proc.stdout)
    jsonschema.validate(report, FINDING_SCHEMA)
    assert report["findings"] == []
    assert {e["path"]: e["message"].split(" ")[0] for e in report["errors"]} == {
        "dangling.py": "cannot",
        "latin.py": "cannot",
        "nul.py": "contains",
        "syntax.py": "syntax",
    }


def test_real_engine_clean_project(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "def f():\n    return 1\n"})
    proc = run_cli("check", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "All checks passed (1 file).\n")


def test_real_engine_finding_and_noqa(tmp_path: Path) -> None:
    example = RULES["BL001"].invalid[0]
    write(tmp_path, {"loader.py": example.code})
    proc = run_cli("check", "--format", "json", "loader.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert [(f["rule"], f["path"], f["line"]) for f in json.loads(proc.stdout)["findings"]] == [
        ("BL001", "loader.py", line) for line in example.lines
    ]
    lines = example.code.splitlines(keepends=True)
    lines[example.lines[0] - 1] = lines[example.lines[0] - 1].rstrip("\n") + "  # noqa: BL001\n"
    write(tmp_path, {"loader.py": "".join(lines)})
    assert run_cli("check", "loader.py", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("code", ["BL003", "BL004", "BL005", "BL006"])
def test_real_engine_select_new_rule(tmp_path: Path, code: str) -> None:
    """The new rules can be selected (the selection is checked against the catalog) and
    their catalog example is reported on its lines."""
    example = RULES[code].invalid[0]
    write(tmp_path, {"loader.py": example.code})
    proc = run_cli("check", "--format", "json", "--select", code, "loader.py", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert [(f["rule"], f["line"]) for f in json.loads(proc.stdout)["findings"]] == [(code, line) for line in example.lines]
    other = "BL004" if code == "BL003" else "BL003"
    assert run_cli("check", "--select", other, "loader.py", cwd=tmp_path).returncode == 0
