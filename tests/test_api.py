"""``bufferlint.api``: the entry point the CLI (and later an editor) uses, called directly.

Everything runs the real analysis on the bundled example or on small trees written here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bufferlint import api, cli
from bufferlint.findings import FileError
from tests.conftest import REPO, write

EXAMPLE = REPO / "examples" / "runai_loader"
GUARD_FILE = Path("streamloader/executor_utils.py")
MODELS_FILE = Path("streamloader/models.py")


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A writable copy of the bundled example (its own pyproject.toml makes it the root)."""
    return Path(shutil.copytree(EXAMPLE, tmp_path / "runai_loader"))


def rules(report: api.Report) -> list[tuple[str, str]]:
    root = report.project.root
    return [(f.rule, f.path.relative_to(root).as_posix()) for f in sorted(report.findings, key=lambda f: f.sort_key())]


def test_the_example_reports_the_guard_and_the_hand_off(example: Path) -> None:
    """One finding per bug: the hand-off the broken guard decides is a step of the guard's
    finding, and a finding of its own when BL002 is not selected."""
    report = api.check(api.CheckOptions(paths=[example]))
    assert report.error is None and report.errors == []
    assert report.project.root == example
    assert rules(report) == [("BL002", GUARD_FILE.as_posix())]
    assert [(s.path.name, s.line) for s in report.findings[0].trace] == [("models.py", 15), ("executor_utils.py", 4)]
    assert all(f.fix is None for f in report.findings)  # fixes are planned only when asked
    report = api.check(api.CheckOptions(paths=[example], select=["BL001"]))
    assert rules(report) == [("BL001", MODELS_FILE.as_posix())]
    bl001 = report.findings_in(example / MODELS_FILE)[0]
    # the trace crosses modules, from the streamer's source to the pool's submit
    assert [(s.path.name, s.line) for s in bl001.trace][0] == ("weights.py", 10)
    assert bl001.trace[-1].path == example / GUARD_FILE
    assert all(f.fix is None for f in report.findings)  # fixes are planned only when asked


def test_one_file_is_reported_with_the_whole_project_analysed(example: Path) -> None:
    report = api.check(api.CheckOptions(paths=[example / MODELS_FILE]))
    assert report.report_files == [example / MODELS_FILE]
    assert len(report.files) == 5  # every module of the project was analysed
    assert rules(report) == [("BL001", MODELS_FILE.as_posix())]


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [(["BL002"], None, ["BL002"]), (None, ["BL002"], ["BL001"]), (["BL0"], ["BL001"], ["BL002"])],
)
def test_selection(example: Path, select, ignore, expected) -> None:
    report = api.check(api.CheckOptions(paths=[example], select=select, ignore=ignore))
    assert [rule for rule, _ in rules(report)] == expected


def test_configured_selection_is_applied(example: Path) -> None:
    pyproject = example / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("[tool.bufferlint]\n", "[tool.bufferlint]\nselect = [\"BL002\"]\n"))
    assert [rule for rule, _ in rules(api.check(api.CheckOptions(paths=[example])))] == ["BL002"]
    # select replaces the configured selection; ignore adds to it
    assert [rule for rule, _ in rules(api.check(api.CheckOptions(paths=[example], select=["BL001"])))] == ["BL001"]
    assert "no rule is selected" in api.check(api.CheckOptions(paths=[example], ignore=["BL002"])).error


def test_suppression_comments_and_their_warnings(example: Path) -> None:
    models = example / MODELS_FILE
    text = models.read_text()
    call = "param.copy_, loaded_weight)"
    models.write_text(text.replace(call, call + "  # noqa: BL001"))
    report = api.check(api.CheckOptions(paths=[example], select=["BL001"], warn_unused_noqa=True))
    assert [rule for rule, _ in rules(report)] == []
    assert report.suppression_warnings == []

    models.write_text(text.replace(call, call + "  # noqa: BL001x"))  # malformed: suppresses nothing
    report = api.check(api.CheckOptions(paths=[example], select=["BL001"]))
    assert [rule for rule, _ in rules(report)] == ["BL001"]
    (warning,) = report.suppression_warnings
    assert (warning.path, warning.line) == (models, 15)
    assert "malformed suppression `# noqa: BL001x`" in warning.message
    assert api.check(api.CheckOptions(paths=[example], suppression_warnings=False)).suppression_warnings == []


def test_baseline_written_then_applied(example: Path, tmp_path: Path) -> None:
    file = tmp_path / "baseline.json"
    written = api.check(api.CheckOptions(paths=[example], write_baseline=file))
    assert written.findings == [] and written.baseline_note == f"wrote 1 finding to the baseline {file}"
    assert {entry["rule"] for entry in json.loads(file.read_text())["findings"]} == {"BL002"}

    report = api.check(api.CheckOptions(paths=[example], baseline=file))
    assert report.findings == [] and report.baseline_note == "1 baselined finding not shown, 0 fixed"

    # a finding the baseline does not hold is reported; one that went away counts as fixed
    guard = example / GUARD_FILE
    guard.write_text(guard.read_text().replace('    device = getattr(weight, "device", None)\n',
                                               '    if getattr(weight, "_sglang_runai_streamer_tensor", False):\n'
                                               '        return False\n    device = getattr(weight, "device", None)\n'))
    report = api.check(api.CheckOptions(paths=[example], baseline=file))
    assert report.findings == [] and report.baseline_note == "0 baselined findings not shown, 1 fixed"


def test_fixes_for_one_file(example: Path) -> None:
    guard = example / GUARD_FILE
    before = guard.read_bytes()
    report = api.check(api.CheckOptions(paths=[guard], fixes=True))
    (finding,) = report.findings
    assert finding.rule == "BL002" and finding.fix.applicability == "safe"
    assert "_sglang_runai_streamer_tensor" in finding.fix.message
    assert report.safe_fixes(guard) == [finding.fix]

    models = api.check(api.CheckOptions(paths=[example / MODELS_FILE], fixes=True))
    assert models.safe_fixes(example / MODELS_FILE) == []  # the hand-off's copy is unsafe
    assert [fix.message for fix in models.safe_fixes(example / MODELS_FILE, unsafe=True)] == [
        "Hand over a copy: `loaded_weight.clone()`"]

    # "all safe fixes in this file", verified and not written
    fixed = api.fix(api.CheckOptions(paths=[guard]), write=False)
    assert isinstance(fixed, api.FixReport)
    assert fixed.outcome.fixed == 1 and fixed.report.findings == [] and fixed.outcome.rejections == []
    old, new = fixed.changed[guard]
    assert old == before.decode() and 'getattr(weight, "_sglang_runai_streamer_tensor", False)' in new
    assert guard.read_bytes() == before


def test_fix_writes_and_the_guard_fix_removes_the_hand_off(example: Path) -> None:
    fixed = api.fix(api.CheckOptions(paths=[example]))
    assert isinstance(fixed, api.FixReport)
    assert fixed.outcome.written == [example / GUARD_FILE]
    # the guard now keeps marked tensors off the pool, so the hand-off is no finding either
    assert fixed.report.findings == [] and fixed.outcome.fixed == 1
    assert api.check(api.CheckOptions(paths=[example])).findings == []


def test_a_syntax_error_is_data(example: Path) -> None:
    broken = example / "streamloader" / "broken.py"
    broken.write_text("def load(:\n    pass\n")
    report = api.check(api.CheckOptions(paths=[example], fixes=True))
    assert report.error is None
    (error,) = report.errors
    assert error.path == broken and "syntax error" in error.message
    assert [rule for rule, _ in rules(report)] == ["BL002"]  # the rest is still analysed


def test_missing_path_is_data_and_the_other_paths_are_checked(example: Path) -> None:
    missing = example / "nowhere.py"
    report = api.check(api.CheckOptions(paths=[missing, example / MODELS_FILE]))
    assert report.path_errors == [FileError(missing, "no such file or directory")]
    assert report.errors[:1] == report.path_errors
    assert rules(report) == [("BL001", MODELS_FILE.as_posix())]


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('select = "BL001"', "select: expected a list of rule codes"),
        ('select = ["BL9"]', "unknown rule code or prefix 'BL9'"),
        ('ignore = ["BL"]', "no rule is selected"),
        ('rule-packs = ["missing.toml"]', "missing.toml does not exist"),
        ("[[tool.bufferlint.guards]]\ncall = 3", "guards"),
    ],
)
def test_a_bad_configuration_is_data(tmp_path: Path, table: str, says: str) -> None:
    write(tmp_path, {"pyproject.toml": f"[tool.bufferlint]\n{table}\n", "pkg/__init__.py": "", "pkg/m.py": "x = 1\n"})
    report = api.check(api.CheckOptions(paths=[tmp_path / "pkg"]))
    assert report.error is not None and says in report.error
    assert str(tmp_path / "pyproject.toml") in report.error
    assert report.findings == [] and report.project is None
    assert isinstance(api.open_project(api.CheckOptions(paths=[tmp_path])), str)
    fixed = api.fix(api.CheckOptions(paths=[tmp_path / "pkg"]))
    assert isinstance(fixed, api.Report) and fixed.error == report.error


def test_bad_options_are_data(example: Path, tmp_path: Path) -> None:
    assert api.check(api.CheckOptions(paths=[example], project_root=tmp_path / "no")).error == (
        f"--project-root {tmp_path / 'no'}: not a directory")
    assert "--baseline" in api.check(api.CheckOptions(paths=[example], baseline=tmp_path / "none.json")).error
    assert api.check(api.CheckOptions(paths=[example], select=["BL001"], ignore=["BL001"])).error.startswith(
        "--select/--ignore: no rule is selected")
    assert "--max-file-size" in api.check(api.CheckOptions(paths=[example], max_file_size=-1)).error


def test_the_command_reports_what_the_api_reports(example: Path, monkeypatch, capsys) -> None:
    """The CLI is a renderer of the API's report: same findings, same order, same fixes."""
    monkeypatch.chdir(example)
    assert cli.main(["check", "--format", "json", "--select", "BL001", "."]) == 1
    shown = json.loads(capsys.readouterr().out)["findings"]
    report = api.check(api.CheckOptions(paths=[example], select=["BL001"], fixes=True))
    assert [(f["rule"], f["line"], f["fix"]["message"]) for f in shown] == [
        (f.rule, f.span.line, f.fix.message) for f in report.findings]
