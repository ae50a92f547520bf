"""Output formats: SARIF and rdjson validated against their official schemas (the real
files, vendored in ``tests/schemas/``), GitHub workflow commands and their escaping, the JSON
``fix`` object, and ``--statistics`` / ``--quiet`` / ``--output-file``.

Findings with fixes are built by hand here (the fixers fill ``Finding.fix``); the engine
runs for real in the end-to-end tests.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import jsonschema
import pytest
import yaml

import bufferlint.analysis
from bufferlint import cli
from bufferlint.catalog import RULES
from bufferlint.findings import AnalysisResult, Edit, FileError, Finding, Fix, Span, TraceStep
from bufferlint.fixes import runner, verify
from bufferlint.reporters import REPORTERS, github, rdjson, sarif
from conftest import REPO, run_cli, write

SCHEMAS = REPO / "tests" / "schemas"


def schema(relative: str) -> jsonschema.Draft4Validator:
    path = SCHEMAS / relative
    return jsonschema.Draft4Validator(json.loads(path.read_text(encoding="utf-8")), format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def valid(validator: jsonschema.Draft4Validator, instance: object) -> None:
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


# A buggy loader (BL001 at line 13) and a broken guard (BL002 at line 1) for the real engine.
LOADER = '''\
import concurrent.futures


def weights(tensors):
    for name, tensor in tensors.items():
        setattr(tensor, "_sglang_runai_streamer_tensor", True)
        yield name, tensor


def load(tensors, fn):
    with concurrent.futures.ThreadPoolExecutor() as executor:
        for name, w in weights(tensors):
            executor.submit(fn, w)
'''
GUARD = '''\
def should_async_load(weight):
    return weight.device.type == "cpu"
'''
GUARD_PATH = "sglang/srt/model_loader/utils.py"

# For hand-built findings: a module with non-ASCII text before the reported column, so that
# rdjson's UTF-8 byte columns differ from bufferlint's character columns.
MODULE = '''\
def load(executor, gewichte):
    for name, w in gewichte:  # Gewichte über den Streamer
        executor.submit(print, "größe", w)
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "pkg/__init__.py": "", "pkg/mod.py": MODULE})
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def hand_built(project: Path) -> AnalysisResult:
    mod = project / "pkg/mod.py"
    fixed = Finding(
        rule="BL001",
        span=Span(mod, 3, 9, 3, 43),
        message="borrowed value 'w' reaches executor.submit without a guard",
        function="pkg.mod:load",
        trace=(
            TraceStep(mod, 2, "bound to 'w' from the streamer"),
            TraceStep(mod, 3, "passed to executor.submit"),
        ),
        fix=Fix(
            applicability="unsafe",
            message="copy the borrowed value before handing it over",
            edits=(
                Edit(3, 41, 3, 42, "w.clone()"),  # the `w` after "größe",
                Edit(2, 5, 2, 5, "# copied below\n    "),  # an insertion, across a line break
            ),
        ),
    )
    plain = Finding(rule="BL002", span=Span(mod, 1, 1, 1, 30), message="guard ignores the marker", function="pkg.mod:load")
    return AnalysisResult(findings=[fixed, plain], errors=[FileError(project / "pkg/broken.py", "syntax error at line 1, column 7: invalid syntax")])


def real_project(root: Path) -> None:
    write(root, {"pyproject.toml": "[project]\nname = 'demo'\n", "loader.py": LOADER, GUARD_PATH: GUARD})


def use_result(monkeypatch: pytest.MonkeyPatch, result: AnalysisResult) -> None:
    """Make ``check`` report exactly ``result``: the engine is replaced, and so are the steps
    that attach and verify the fixers' fixes, so the hand-built fixes are the ones rendered."""
    monkeypatch.setattr(bufferlint.analysis, "analyze_project", lambda root, files, report_files, vocab, cache=None, progress=None: result)
    monkeypatch.setattr(runner, "attach_fixes", lambda findings, *args, **kwargs: list(findings))
    monkeypatch.setattr(verify, "verify_fixes", lambda result, *args: verify.Verified(list(result.findings)))


def test_every_format_is_registered() -> None:
    assert set(REPORTERS) == {"full", "concise", "json", "sarif", "github", "rdjson", "rdjsonl"}
    formats = next(a for a in cli.build_parser()._subparsers._group_actions[0].choices["check"]._actions
                   if a.dest == "output_format")
    assert set(formats.choices) == set(REPORTERS) | {"text"}  # text: full's old name
    assert set(formats.option_strings) == {"--output-format", "--format"}


# ---------------------------------------------------------------------------
# SARIF


def test_sarif_is_valid_and_complete(project: Path) -> None:
    log = json.loads(sarif.render(hand_built(project), project, root=project))
    valid(schema("sarif-schema-2.1.0.json"), log)
    assert log["version"] == "2.1.0"
    [run] = log["runs"]

    driver = run["tool"]["driver"]
    assert driver["name"] == "bufferlint" and driver["version"]
    assert [r["id"] for r in driver["rules"]] == list(RULES)
    for descriptor, rule in zip(driver["rules"], RULES.values()):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"].startswith("Finds ")
        assert rule.doc in descriptor["help"]["markdown"] and descriptor["help"]["text"]
        assert descriptor["defaultConfiguration"] == {"level": rule.severity}  # BL003: warning
        assert "helpUri" not in descriptor  # the docs are not published anywhere yet

    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"
    first, second = run["results"]
    assert (first["ruleId"], first["ruleIndex"], first["level"]) == ("BL002", 1, "error")
    assert (second["ruleId"], second["ruleIndex"]) == ("BL001", 0)
    assert second["message"]["text"] == "borrowed value 'w' reaches executor.submit without a guard"
    [location] = second["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": "pkg/mod.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 43},
    }
    assert location["logicalLocations"] == [{"fullyQualifiedName": "pkg.mod:load", "kind": "function"}]
    assert re.fullmatch(r"[0-9a-f]{20}", second["partialFingerprints"]["primaryLocationLineHash"])
    assert first["partialFingerprints"]["primaryLocationLineHash"] != second["partialFingerprints"]["primaryLocationLineHash"]

    # the trace, source first and sink last
    [flow] = second["codeFlows"]
    steps = flow["threadFlows"][0]["locations"]
    assert [(s["location"]["physicalLocation"]["region"]["startLine"], s["location"]["message"]["text"]) for s in steps] == [
        (2, "bound to 'w' from the streamer"),
        (3, "passed to executor.submit"),
    ]
    assert "codeFlows" not in first and "fixes" not in first  # no trace, no fix

    [fix] = second["fixes"]
    assert fix["description"]["text"] == "copy the borrowed value before handing it over"
    assert fix["properties"] == {"applicability": "unsafe"}
    [change] = fix["artifactChanges"]
    assert change["artifactLocation"] == {"uri": "pkg/mod.py", "uriBaseId": "%SRCROOT%"}
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 3, "startColumn": 41, "endLine": 3, "endColumn": 42}, "insertedContent": {"text": "w.clone()"}},
        {"deletedRegion": {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 5}, "insertedContent": {"text": "# copied below\n    "}},
    ]

    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and note["message"]["text"].startswith("syntax error")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "pkg/broken.py", "uriBaseId": "%SRCROOT%"}


def test_sarif_paths_outside_the_current_directory_are_absolute_uris(project: Path, tmp_path_factory) -> None:
    elsewhere = tmp_path_factory.mktemp("other dir")
    result = AnalysisResult(findings=[Finding("BL001", Span(elsewhere / "a b.py", 1, 1, 1, 2), "m", "a")])
    log = json.loads(sarif.render(result, project))
    valid(schema("sarif-schema-2.1.0.json"), log)
    artifact = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": (elsewhere / "a b.py").as_uri()} and "%20" in artifact["uri"]


def test_sarif_of_a_clean_run_is_valid(project: Path) -> None:
    log = json.loads(sarif.render(AnalysisResult(), project))
    valid(schema("sarif-schema-2.1.0.json"), log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_sarif_from_the_real_engine(tmp_path: Path) -> None:
    real_project(tmp_path)
    proc = run_cli("check", "--format", "sarif", "--output-file", "out/bufferlint.sarif", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "cannot write" in proc.stderr  # out/ does not exist
    (tmp_path / "out").mkdir()
    proc = run_cli("check", "--format", "sarif", "--output-file", "out/bufferlint.sarif", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (1, "")
    # the BL001's safe fix (submit only when the guard approves) works once the guard's fix is in
    assert proc.stderr == "Found 2 findings (1 BL001, 1 BL002) in 2 files. 2 fixable with `--fix`.\n"
    log = json.loads((tmp_path / "out/bufferlint.sarif").read_text(encoding="utf-8"))
    valid(schema("sarif-schema-2.1.0.json"), log)
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("BL001", "loader.py"), ("BL002", GUARD_PATH),
    ]
    steps = results[0]["codeFlows"][0]["threadFlows"][0]["locations"]
    lines = [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps]
    assert lines[0] == 6 and lines[-1] == 13  # marked at the source, consumed at the sink


def test_sarif_fingerprints_survive_line_moves(tmp_path: Path) -> None:
    real_project(tmp_path)

    def hashes() -> list[str]:
        proc = run_cli("check", "--format", "sarif", ".", cwd=tmp_path)
        assert proc.returncode == 1, proc.stderr
        return [r["partialFingerprints"]["primaryLocationLineHash"] for r in json.loads(proc.stdout)["runs"][0]["results"]]

    before = hashes()
    write(tmp_path, {"loader.py": '"""Loaders."""\n\nimport os\n\n\n' + LOADER.replace("executor.submit(fn, w)", "executor.submit( fn,  w )")})
    assert hashes() == before


# ---------------------------------------------------------------------------
# rdjson / rdjsonl


def test_rdjson_is_valid_with_suggestions_from_fixes(project: Path) -> None:
    report = json.loads(rdjson.render(hand_built(project), project))
    valid(schema("rdjson/DiagnosticResult.json"), report)
    assert report["source"] == {"name": "bufferlint"}
    guard, borrowed, error = report["diagnostics"]
    assert guard["code"] == {"value": "BL002"} and "suggestions" not in guard
    assert borrowed["code"] == {"value": "BL001"} and borrowed["severity"] == "ERROR"
    # column 43 (characters) of `        executor.submit(print, "größe", w)` is byte 45: ö and ß are two bytes each
    assert borrowed["location"] == {"path": "pkg/mod.py", "range": {"start": {"line": 3, "column": 9}, "end": {"line": 3, "column": 45}}}
    assert borrowed["related_locations"] == [
        {"message": "bound to 'w' from the streamer", "location": {"path": "pkg/mod.py", "range": {"start": {"line": 2}}}},
        {"message": "passed to executor.submit", "location": {"path": "pkg/mod.py", "range": {"start": {"line": 3}}}},
    ]
    # one suggestion replacing whole lines 2-3 (what GitHub's suggested changes need), as they read after the fix
    assert borrowed["suggestions"] == [{
        "range": {"start": {"line": 2}, "end": {"line": 3}},
        "text": "    # copied below\n"
                "    for name, w in gewichte:  # Gewichte über den Streamer\n"
                '        executor.submit(print, "größe", w.clone())',
    }]
    assert error == {
        "message": "could not be analysed: syntax error at line 1, column 7: invalid syntax",
        "location": {"path": "pkg/broken.py"},
        "severity": "ERROR",
        "source": {"name": "bufferlint"},
    }


def test_rdjson_suggestion_that_deletes_a_line(project: Path) -> None:
    mod = project / "pkg/mod.py"
    fix = Fix("safe", "drop the line", (Edit(2, 1, 3, 1, ""),))
    result = AnalysisResult(findings=[Finding("BL001", Span(mod, 2, 5, 2, 9), "m", "pkg.mod:load", fix=fix)])
    [diagnostic] = json.loads(rdjson.render(result, project))["diagnostics"]
    assert diagnostic["suggestions"] == [{"range": {"start": {"line": 2}, "end": {"line": 2}}, "text": ""}]


def test_rdjsonl_lines_are_valid_diagnostics(project: Path) -> None:
    validator = schema("rdjson/Diagnostic.json")
    lines = rdjson.render_lines(hand_built(project), project).splitlines()
    assert len(lines) == 3
    for line in lines:
        valid(validator, json.loads(line))
    assert json.loads(lines[1]) == json.loads(rdjson.render(hand_built(project), project))["diagnostics"][1]


@pytest.mark.parametrize("fmt", ["rdjson", "rdjsonl"])
def test_rdjson_from_the_real_engine(tmp_path: Path, fmt: str) -> None:
    real_project(tmp_path)
    proc = run_cli("check", "--format", fmt, ".", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    if fmt == "rdjson":
        report = json.loads(proc.stdout)
        valid(schema("rdjson/DiagnosticResult.json"), report)
        diagnostics = report["diagnostics"]
    else:
        diagnostics = [json.loads(line) for line in proc.stdout.splitlines()]
        for diagnostic in diagnostics:
            valid(schema("rdjson/Diagnostic.json"), diagnostic)
    assert [(d["code"]["value"], d["location"]["path"], d["location"]["range"]["start"]["line"]) for d in diagnostics] == [
        ("BL001", "loader.py", 13), ("BL002", GUARD_PATH, 1),
    ]


# ---------------------------------------------------------------------------
# GitHub workflow commands


def test_github_annotation(project: Path) -> None:
    out = github.render(hand_built(project), project)
    assert out.splitlines() == [
        "::error file=pkg/mod.py,line=1,col=1,endLine=1,endColumn=30,title=bufferlint (BL002)::guard ignores the marker",
        "::error file=pkg/mod.py,line=3,col=9,endLine=3,endColumn=43,title=bufferlint (BL001)::"
        "borrowed value 'w' reaches executor.submit without a guard"
        "%0Apkg/mod.py:2: bound to 'w' from the streamer"
        "%0Apkg/mod.py:3: passed to executor.submit"
        "%0Afix available (unsafe): copy the borrowed value before handing it over",
        "::error file=pkg/broken.py,title=bufferlint::syntax error at line 1, column 7: invalid syntax",
    ]


def test_github_escaping(project: Path) -> None:
    odd = project / "we,ird:name%.py"
    finding = Finding("BL001", Span(odd, 2, 3, 4, 5), "100% borrowed\r\nsecond line: a, b", "m")
    out = github.render(AnalysisResult(findings=[finding]), project)
    assert out == (
        "::error file=we%2Cird%3Aname%25.py,line=2,col=3,endLine=4,endColumn=5,title=bufferlint (BL001)"
        "::100%25 borrowed%0D%0Asecond line: a, b\n"
    )
    assert github.escape_property("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad%3Ae%2Cf"
    assert github.escape_data("a%b\rc\nd:e,f") == "a%25b%0Dc%0Ad:e,f"


def test_github_from_the_real_engine(tmp_path: Path) -> None:
    real_project(tmp_path)
    proc = run_cli("check", "--format", "github", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "Found 2 findings (1 BL001, 1 BL002) in 2 files.\n")
    lines = proc.stdout.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"::error file=loader\.py,line=13,col=13,endLine=13,endColumn=\d+,title=bufferlint \(BL001\)::[^\n]+", lines[0])
    assert lines[1].startswith(f"::error file={GUARD_PATH},line=1,col=1,")


def test_github_writes_every_finding_to_the_job_summary(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """GitHub shows 10 annotations per step: the job summary holds all of them."""
    result = hand_built(project)
    result.errors = []
    mod = project / "pkg/mod.py"
    result.findings += [Finding("BL003", Span(mod, line, 1, line, 2), f"kept | {line}", "pkg.mod:load") for line in range(1, 13)]
    use_result(monkeypatch, result)
    summary_file = project / "summary.md"
    summary_file.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    assert cli.main(["check", "--output-format", "github", "pkg"]) == 1
    out, err = capsys.readouterr()
    assert out.count("::warning file=pkg/mod.py") == 12 and out.count("::error ") == 2  # BL003 is a warning
    table = summary_file.read_text(encoding="utf-8")
    assert table.startswith("earlier step\n### bufferlint\n\nFound 14 findings (1 BL001, 1 BL002, 12 BL003) in 2 files.\n")
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`" in line]
    assert len(rows) == 14
    assert "| warning | BL003 | `pkg/mod.py:12:1` | kept \\| 12 |" in rows
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert cli.main(["check", "--output-format", "github", "pkg"]) == 1  # no summary file: annotations only
    assert summary_file.read_text(encoding="utf-8") == table


# ---------------------------------------------------------------------------
# JSON fix object, --statistics, --quiet, --output-file (in-process, engine replaced)


def test_json_fix_object(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_result(monkeypatch, hand_built(project))
    assert cli.main(["check", "--format", "json", "pkg"]) == 2  # the FileError
    report = json.loads(capsys.readouterr().out)
    guard, borrowed = report["findings"]
    assert guard["fix"] is None
    assert borrowed["fix"] == {
        "applicability": "unsafe",
        "message": "copy the borrowed value before handing it over",
        "edits": [
            {"line": 3, "column": 41, "end_line": 3, "end_column": 42, "replacement": "w.clone()"},
            {"line": 2, "column": 5, "end_line": 2, "end_column": 5, "replacement": "# copied below\n    "},
        ],
    }
    assert list(borrowed) == ["rule", "path", "line", "column", "end_line", "end_column", "message", "function", "trace", "fix",
                             "fix_error", "severity", "group", "other_paths"]
    assert guard["group"] != borrowed["group"]  # no producer in either trace: a group each
    assert (guard["severity"], borrowed["severity"]) == ("error", "error")


def test_statistics(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    result = hand_built(project)
    result.errors = []
    mod = project / "pkg/mod.py"
    result.findings.append(Finding("BL001", Span(mod, 2, 5, 2, 9), "m", "pkg.mod:load"))
    use_result(monkeypatch, result)
    assert cli.main(["check", "--statistics", "pkg"]) == 1
    out, err = capsys.readouterr()
    # the one fix is unsafe: fixable only with --unsafe-fixes, as --fix would apply it
    assert out == "2  BL001  borrowed-value-to-async-sink\n1  BL002  guard-ignores-marker\n3 findings in 3 groups (one per producer)\n"
    assert err == "Found 3 findings (2 BL001, 1 BL002) in 2 files. 0 fixable with `--fix` (1 more with `--unsafe-fixes`).\n"
    assert cli.main(["check", "--statistics", "--unsafe-fixes", "pkg"]) == 1
    out, err = capsys.readouterr()
    assert out == ("2  BL001  borrowed-value-to-async-sink (1 fixable)\n1  BL002  guard-ignores-marker\n"
                   "3 findings in 3 groups (one per producer)\n")
    assert err == "Found 3 findings (2 BL001, 1 BL002) in 2 files. 1 fixable with `--fix --unsafe-fixes`.\n"
    assert cli.main(["check", "--statistics", "--format", "json", "--exit-zero", "--unsafe-fixes", "pkg"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"code": "BL001", "name": "borrowed-value-to-async-sink", "count": 2, "fixable": 1, "groups": 2},
        {"code": "BL002", "name": "guard-ignores-marker", "count": 1, "fixable": 0, "groups": 1},
    ]


def test_statistics_only_as_text_or_json(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    called = []
    monkeypatch.setattr(bufferlint.analysis, "analyze_project", lambda *args, **kwargs: called.append(args))
    assert cli.main(["check", "--statistics", "--format", "sarif", "pkg"]) == 2
    assert capsys.readouterr().err == "bufferlint: error: --statistics prints full, concise, json, not sarif\n"
    assert called == []  # refused before any analysis


def test_quiet_drops_the_summary(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_result(monkeypatch, AnalysisResult(findings=hand_built(project).findings))
    assert cli.main(["check", "-q", "pkg"]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("pkg/mod.py:1:1: BL002 ") and err == ""
    assert cli.main(["check", "pkg"]) == 1
    assert capsys.readouterr().err == "Found 2 findings (1 BL001, 1 BL002) in 2 files.\n"


def test_output_file(project: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    use_result(monkeypatch, AnalysisResult(findings=hand_built(project).findings))
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)  # a file is never coloured
    assert cli.main(["check", "-o", "report.txt", "pkg"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == "Found 2 findings (1 BL001, 1 BL002) in 2 files.\n"
    text = (project / "report.txt").read_text(encoding="utf-8")
    assert text.startswith("pkg/mod.py:1:1: BL002 ") and "\x1b[" not in text
    assert cli.main(["check", "--format", "rdjson", "--output-file", "report.json", "pkg"]) == 1
    assert json.loads((project / "report.json").read_text(encoding="utf-8"))["diagnostics"][0]["code"] == {"value": "BL002"}
    assert capsys.readouterr() == (
        "", "Found 2 findings (1 BL001, 1 BL002) in 2 files. 0 fixable with `--fix` (1 more with `--unsafe-fixes`).\n")


# ---------------------------------------------------------------------------
# The CI snippets of docs/ci.md are meant to be copied: they must be valid YAML, and every
# bufferlint command in them must be one this bufferlint accepts.


def readme_yaml_blocks() -> list[object]:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)]


def test_readme_ci_snippets() -> None:
    blocks = readme_yaml_blocks()
    [pre_commit] = [b for b in blocks if isinstance(b, dict) and "repos" in b]
    assert [h["id"] for h in pre_commit["repos"][0]["hooks"]] == ["bufferlint", "bufferlint-fix"]
    workflows = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
    assert len(workflows) == 2
    steps = [step for wf in workflows for job in wf["jobs"].values() for step in job["steps"]]
    uses = [step.get("uses", "") for step in steps]
    assert "github/codeql-action/upload-sarif@v3" in uses and "reviewdog/action-setup@v1" in uses
    commands = [step["run"] for step in steps if "bufferlint check" in step.get("run", "")]
    assert len(commands) == 2
    parser = cli.build_parser()
    for command in commands:
        words = shlex.split(command.replace("\\\n", " "))
        args = words[1 : words.index("|")] if "|" in words else words[1:]
        parsed = parser.parse_args(args)
        assert parsed.handler is cli.run_check and parsed.output_format in ("sarif", "rdjson") and parsed.exit_zero
        if "|" in words:
            assert words[words.index("|") + 1 :][:4] == ["reviewdog", "-f=rdjson", "-name=bufferlint", "-reporter=github-pr-review"]
    [upload] = [step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif")]
    assert upload["with"]["sarif_file"] == "bufferlint.sarif"
    assert any("security-events" in wf.get("permissions", {}) for wf in workflows)
