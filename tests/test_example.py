"""The README's first command: the bundled example reproduces SGLang 0.5.16's bug."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runai_loader"


def run(*args: str, cwd: Path = EXAMPLE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bufferlint", *args], cwd=cwd, capture_output=True, text=True)


def test_example_reports_the_broken_guard_for_the_loader() -> None:
    """One finding per bug: the loader's call is decided by the broken guard, so the guard's
    BL002 stands for it (a step of its trace); the BL001 is told when BL002 is not selected."""
    proc = run("check", ".", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["errors"] == []
    found = sorted((f["rule"], f["path"], f["line"], f["function"]) for f in report["findings"])
    assert found == [
        ("BL002", "streamloader/executor_utils.py", 4, "streamloader.executor_utils:should_async_load"),
    ]
    assert [(step["path"], step["line"]) for step in report["findings"][0]["trace"]] == [
        ("streamloader/models.py", 15), ("streamloader/executor_utils.py", 4)]

    proc = run("check", ".", "--format", "json", "--select", "BL001")
    report = json.loads(proc.stdout)
    found = sorted((f["rule"], f["path"], f["line"], f["function"]) for f in report["findings"])
    assert found == [("BL001", "streamloader/models.py", 15, "streamloader.models:TinyModel.load_weights")]
    bl001 = report["findings"][0]
    assert [step["path"] for step in bl001["trace"]][0] == "streamloader/weights.py"
    assert bl001["trace"][-1]["path"] == "streamloader/executor_utils.py"


def test_checking_one_file_still_sees_the_whole_project() -> None:
    """What pre-commit runs: only the changed file is reported, sources come from the others."""
    proc = run("check", "streamloader/models.py")
    assert proc.returncode == 1
    assert proc.stdout.startswith("streamloader/models.py:15:17: BL001 ")
    assert "executor_utils.py:4" not in proc.stdout.splitlines()[0]


def test_fixing_the_guard_silences_both(tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    utils = project / "streamloader" / "executor_utils.py"
    utils.write_text(
        utils.read_text().replace(
            '    device = getattr(weight, "device", None)\n',
            '    if getattr(weight, "_sglang_runai_streamer_tensor", False):\n'
            "        return False\n"
            '    device = getattr(weight, "device", None)\n',
            1,
        )
    )
    proc = run("check", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout


# ---------------------------------------------------------------------------
# Nothing offered is wrong: every fix a report offers removes its finding on its own.


def _fix_check():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fix_check", EXAMPLE.parents[1] / "benchmarks" / "fix_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_fix_offered_in_sarif_removes_its_finding_alone(capsys) -> None:
    """The BL001 copy fix once copied the guard's argument (``should_async_load(w.clone())``)
    and left the payload borrowed; --fix rejected it, but SARIF offered it."""
    assert _fix_check().main([str(EXAMPLE)]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert out.startswith("1 fixes offered") and "1 of 1 fixes remove their finding alone" in out


def _checked_copy(tmp_path: Path):
    """The fixes offered with BL001 alone selected: the guard's BL002 does not stand for the
    loader's call then, which is told with its own fixes."""
    import shutil

    from bufferlint import api

    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    report = api.check(api.CheckOptions(paths=(project,), fixes=True, cache=False, select=("BL001",)))
    return {f.rule: f.fix for f in report.findings}


def _no_op_fix(finding):
    """A fix that changes nothing the analysis sees: its finding stays."""
    from bufferlint.findings import Edit, Fix

    return Fix("safe", "Add a comment", (Edit(finding.span.line, 1, finding.span.line, 1, "# changed\n"),))


def test_a_fix_that_leaves_its_finding_is_not_offered(tmp_path: Path, monkeypatch) -> None:
    from bufferlint.fixes import bl001

    monkeypatch.setattr(bl001, "candidates", lambda finding, text, context: [_no_op_fix(finding)])
    fixes = _checked_copy(tmp_path)
    assert fixes == {"BL001": None}


def test_the_next_candidate_is_offered_when_the_first_fails(tmp_path: Path, monkeypatch) -> None:
    from bufferlint.fixes import bl001

    planned = bl001.candidates
    monkeypatch.setattr(bl001, "candidates",
                        lambda finding, text, context: [_no_op_fix(finding), *planned(finding, text, context)])
    fixes = _checked_copy(tmp_path)
    assert fixes["BL001"].message == "Hand over a copy: `loaded_weight.clone()`"
    assert [(e.line, e.replacement) for e in fixes["BL001"].edits] == [(15, ".clone()")]
