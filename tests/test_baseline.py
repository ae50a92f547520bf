"""Fingerprints and baselines: ``--write-baseline`` records today's findings, ``--baseline``
reports only new ones and counts the fixed ones, across line moves and unrelated edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bufferlint import baseline
from bufferlint.findings import Finding, Span
from bufferlint.fingerprint import fingerprints
from conftest import run_cli, write
from test_formats import GUARD, GUARD_PATH, LOADER

FIXED_GUARD = '''\
def should_async_load(weight):
    if getattr(weight, "_sglang_runai_streamer_tensor", False):
        return False
    return weight.device.type == "cpu"
'''


def finding(path: Path, line: int, rule: str = "BL001", function: str = "pkg.mod:load") -> Finding:
    return Finding(rule, Span(path, line, 9, line, 20), "message", function)


# ---------------------------------------------------------------------------
# Fingerprints


def test_fingerprints_ignore_line_numbers_layout_and_comments(tmp_path: Path) -> None:
    mod = tmp_path / "pkg/mod.py"
    write(tmp_path, {"pkg/mod.py": "def load(ex, w):\n    ex.submit(f, w)\n"})
    [before] = fingerprints([finding(mod, 2)], tmp_path)
    write(tmp_path, {"pkg/mod.py": "import os\n\n\ndef load(ex, w):\n    ex.submit( f,w )  # TODO: faster\n"})
    assert fingerprints([finding(mod, 5)], tmp_path) == [before]


def test_fingerprints_change_with_what_the_finding_is(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/mod.py": "def load(ex, w):\n    ex.submit(f, w)\n    ex.submit(g, w)\n", "pkg/other.py": "    ex.submit(f, w)\n"})
    mod, other = tmp_path / "pkg/mod.py", tmp_path / "pkg/other.py"
    base = finding(mod, 2)
    variants = [
        base,
        finding(mod, 3),  # other text
        finding(mod, 2, rule="BL002"),
        finding(mod, 2, function="pkg.mod:reload"),
        finding(other, 1),  # same text, other file
    ]
    prints = fingerprints(variants, tmp_path)
    assert len(set(prints)) == len(prints)


def test_identical_lines_are_told_apart_by_their_order(tmp_path: Path) -> None:
    write(tmp_path, {"pkg/mod.py": "def load(ex, w):\n    ex.submit(f, w)\n    ex.submit(f, w)\n"})
    mod = tmp_path / "pkg/mod.py"
    first, second = fingerprints([finding(mod, 2), finding(mod, 3)], tmp_path)
    assert first != second
    assert fingerprints([finding(mod, 3), finding(mod, 2)], tmp_path) == [second, first]  # by position, not input order


def test_fingerprint_paths_are_relative_to_the_project_root(tmp_path: Path) -> None:
    for where in ("a", "b"):
        write(tmp_path / where, {"pkg/mod.py": "def load(ex, w):\n    ex.submit(f, w)\n"})
    assert fingerprints([finding(tmp_path / "a/pkg/mod.py", 2)], tmp_path / "a") == fingerprints(
        [finding(tmp_path / "b/pkg/mod.py", 2)], tmp_path / "b"
    )


# ---------------------------------------------------------------------------
# The baseline file


def test_apply_counts_fixed_only_in_scope(tmp_path: Path) -> None:
    entries = [baseline.Entry("aaa", "BL001", "a.py"), baseline.Entry("bbb", "BL001", "b.py"), baseline.Entry("ccc", "BL002", "a.py")]
    f1, f2 = finding(tmp_path / "a.py", 1), finding(tmp_path / "a.py", 2)
    outcome = baseline.apply(entries, [f1, f2], ["aaa", "zzz"], lambda e: e.path == "a.py")
    assert outcome.new == [f2] and outcome.baselined == 1
    assert outcome.fixed == 1  # ccc; bbb is in a file this run did not check


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file (create it with --write-baseline {file})"),
        (b"{not json", "not a bufferlint baseline (invalid JSON: "),
        (b"\xff\xfe", "not a bufferlint baseline (invalid JSON: "),
        (b"[]", "not a bufferlint baseline (expected an object with 'version' and 'findings')"),
        (b'{"version": 2, "findings": []}', "unsupported baseline version 2 (this bufferlint reads version 1)"),
        (b'{"version": 1, "findings": {}}', "'findings' must be a list"),
        (b'{"version": 1, "findings": [{"rule": "BL001"}]}', "findings[0] must be an object with string 'fingerprint', 'rule' and 'path'"),
    ],
    ids=["missing", "invalid-json", "not-utf8", "not-an-object", "version", "findings-not-list", "bad-entry"],
)
def test_bad_baseline_is_a_usage_error(tmp_path: Path, content: bytes | None, message: str) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    if content is not None:
        write(tmp_path, {"bl.json": content})
    proc = run_cli("check", "--baseline", "bl.json", "a.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith("bufferlint: error: --baseline bl.json: " + message.format(file="bl.json"))
    assert proc.stderr.count("\n") == 1


def test_write_baseline_excludes_baseline_and_add_noqa(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    for extra in (["--baseline", "old.json"], ["--add-noqa"]):
        proc = run_cli("check", "--write-baseline", "bl.json", *extra, "a.py", cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stderr == "bufferlint: error: --write-baseline cannot be combined with --baseline or --add-noqa\n"


# ---------------------------------------------------------------------------
# End to end with the real engine


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "loader.py": LOADER, GUARD_PATH: GUARD})
    return tmp_path


def test_baseline_workflow(project: Path) -> None:
    proc = run_cli("check", "--write-baseline", "bufferlint-baseline.json", ".", cwd=project)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == "All checks passed (2 files). Wrote 2 findings to the baseline bufferlint-baseline.json.\n"
    data = json.loads((project / "bufferlint-baseline.json").read_text(encoding="utf-8"))
    assert data["version"] == 1 and data["tool"] == "bufferlint"
    assert [(e["rule"], e["path"], e["function"], e["line"]) for e in data["findings"]] == [
        ("BL001", "loader.py", "loader:load", 13),
        ("BL002", GUARD_PATH, "sglang.srt.model_loader.utils:should_async_load", 1),
    ]

    # day one in CI: nothing new
    proc = run_cli("check", "--baseline", "bufferlint-baseline.json", ".", cwd=project)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == "All checks passed (2 files). 2 baselined findings not shown, 0 fixed.\n"

    # unrelated edits move the old finding; a new buggy call is reported, alone
    write(project, {"loader.py": '"""Loaders."""\n\nimport logging\n\n' + LOADER.replace(
        "            executor.submit(fn, w)\n",
        "            logging.debug('loading %s', name)\n            executor.submit(fn, w)\n            executor.submit(print, w)\n",
    )})
    proc = run_cli("check", "--baseline", "bufferlint-baseline.json", "--format", "json", ".", cwd=project)
    assert proc.returncode == 1
    assert [(f["rule"], f["line"]) for f in json.loads(proc.stdout)["findings"]] == [("BL001", 19)]
    assert proc.stderr == "Found 1 finding (1 BL001) in 2 files. 2 baselined findings not shown, 0 fixed.\n"
    assert run_cli("check", "--baseline", "bufferlint-baseline.json", "--format", "json", "-q", ".", cwd=project).stderr == ""

    # fixing a baselined finding is counted, but only when its file is checked
    write(project, {GUARD_PATH: FIXED_GUARD})
    proc = run_cli("check", "--baseline", "bufferlint-baseline.json", "--select", "BL002", ".", cwd=project)
    assert (proc.returncode, proc.stderr) == (0, "All checks passed (2 files). 0 baselined findings not shown, 1 fixed.\n")
    proc = run_cli("check", "--baseline", "bufferlint-baseline.json", "--select", "BL002", "loader.py", cwd=project)
    assert proc.stderr == "All checks passed (1 file). 0 baselined findings not shown, 0 fixed.\n"
    proc = run_cli("check", "--baseline", "bufferlint-baseline.json", "--select", "BL001", GUARD_PATH, cwd=project)
    assert proc.stderr == "All checks passed (1 file). 0 baselined findings not shown, 0 fixed.\n"  # BL002 not selected


def test_sarif_with_a_baseline_reports_only_new_findings(project: Path) -> None:
    assert run_cli("check", "--write-baseline", "bl.json", "loader.py", cwd=project).returncode == 0
    proc = run_cli("check", "--baseline", "bl.json", "--format", "sarif", ".", cwd=project)
    assert proc.returncode == 1
    assert [r["ruleId"] for r in json.loads(proc.stdout)["runs"][0]["results"]] == ["BL002"]
    assert proc.stderr == ("Found 1 finding (1 BL002) in 2 files. 1 fixable with `--fix`. "
                           "1 baselined finding not shown, 0 fixed.\n")
