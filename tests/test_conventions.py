"""Ruff's command-line conventions where they apply, and output that fits a CI log: the
output-format option and key, no abbreviated flags, git-ignored and force-excluded files,
--exclude/--extend-exclude, extend-select and per-file-ignores, concise and full output,
one severity per rule in every format, and counts of fixes that --fix agrees with.
All on the real engine."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bufferlint import cli
from bufferlint.catalog import RULES
from conftest import run_cli, write

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "runai_loader"

# Two loaders of one stream: their BL003 findings are one group (one producer).
STREAM = '''\
class Streamer:
    def get_tensors(self):
        yield from ()


def stream():
    for tensor in Streamer().get_tensors():
        yield tensor
'''
KEEPERS = '''\
from pkg.stream import stream

KEPT = []
ALSO = []


def keep():
    for w in stream():
        KEPT.append(w)


def keep_too():
    for w in stream():
        ALSO.append(w)
'''
PACK = '''\
[project]
name = "demo"

[tool.bufferlint]
markers = ["_streamed"]
<KEYS>
[[tool.bufferlint.sources]]
call = "pkg.stream.Streamer.get_tensors"
'''


def configure(root: Path, keys: str = "", tables: str = "") -> None:
    """The project's pyproject.toml with these ``[tool.bufferlint]`` keys and sub-tables."""
    (root / "pyproject.toml").write_text(PACK.replace("<KEYS>", keys) + tables, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, {"pyproject.toml": PACK.replace("<KEYS>", ""), "pkg/__init__.py": "", "pkg/stream.py": STREAM, "pkg/keepers.py": KEEPERS})
    return tmp_path


def findings(proc: subprocess.CompletedProcess) -> list[tuple[str, str, int]]:
    assert proc.returncode in (0, 1), proc.stderr
    return [(f["rule"], f["path"], f["line"]) for f in json.loads(proc.stdout)["findings"]]


def test_the_project_has_two_bl003(project: Path) -> None:
    assert findings(run_cli("check", "--output-format", "json", ".", cwd=project)) == [
        ("BL003", "pkg/keepers.py", 9), ("BL003", "pkg/keepers.py", 14)]


# -- flags --------------------------------------------------------------------------------


def test_no_abbreviated_flags(project: Path) -> None:
    """`--out json` was taken as `--output-file json` (exit 1, a file named json written)."""
    proc = run_cli("check", "--out", "json", ".", cwd=project)
    assert proc.returncode == 2 and "unrecognized arguments: --out" in proc.stderr
    assert not (project / "json").exists()
    assert run_cli("check", "--output-f", "json", ".", cwd=project).returncode == 2


def test_format_is_an_alias_of_output_format(project: Path) -> None:
    new = run_cli("check", "--output-format", "json", ".", cwd=project)
    old = run_cli("check", "--format", "json", ".", cwd=project)
    assert new.stdout == old.stdout and json.loads(new.stdout)["findings"]


def test_output_format_key(project: Path) -> None:
    configure(project, 'output-format = "concise"\n')
    proc = run_cli("check", ".", cwd=project)
    assert proc.stdout.splitlines() == [line for line in proc.stdout.splitlines() if line.startswith("pkg/keepers.py:")]
    assert len(proc.stdout.splitlines()) == 2
    assert json.loads(run_cli("check", "--output-format", "json", ".", cwd=project).stdout)  # the option wins
    configure(project, 'output-format = "yaml"\n')
    proc = run_cli("check", ".", cwd=project)
    assert proc.returncode == 2 and "output-format: expected one of full, concise" in proc.stderr


def test_concise_is_one_line_per_finding(project: Path) -> None:
    proc = run_cli("check", "--output-format", "concise", ".", cwd=project)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [["pkg/keepers.py:9:9:", "BL003"], ["pkg/keepers.py:14:9:", "BL003"]]
    assert proc.stderr == "Found 2 findings (2 BL003) in 3 files.\n"


def test_full_writes_one_producers_findings_once(project: Path) -> None:
    full = run_cli("check", ".", cwd=project).stdout
    assert run_cli("check", "--output-format", "text", ".", cwd=project).stdout == full  # text: full's old name
    lines = full.splitlines()
    assert lines[0] == "pkg/stream.py:7: 2 findings (2 BL003) from one producer: `get_tensors(...)` hands out borrowed views"
    assert "  every trace starts the same:" in lines and "    pkg/stream.py:8: yielded to the caller" in lines
    assert lines[-3:] == [
        "  2 sites (each with its trace in `--output-format json` or `sarif`):",
        "    pkg/keepers.py:9:9: BL003 kept in `KEPT`, which outlives the producer's step",
        "    pkg/keepers.py:14:9: BL003 kept in `ALSO`, which outlives the producer's step",
    ]


def test_full_wraps_long_messages(project: Path) -> None:
    write(project, {"pkg/keepers.py": KEEPERS[:KEEPERS.index("def keep_too")]})  # one finding: shown whole
    full = run_cli("check", ".", cwd=project).stdout
    message = next(line for line in full.splitlines() if line.startswith("pkg/keepers.py:9:9: BL003 "))
    assert len(message) <= 100 and full.splitlines()[1].startswith("  ")  # continued, indented by two
    concise = run_cli("check", "--output-format", "concise", ".", cwd=project).stdout.splitlines()[0]
    assert len(concise) > 100 and concise.startswith(message)


def test_every_machine_format_prints_the_summary_on_stderr(project: Path) -> None:
    for output in ("json", "sarif", "rdjson", "rdjsonl", "github"):
        proc = run_cli("check", "--output-format", output, ".", cwd=project)
        assert proc.stderr.startswith("Found 2 findings (2 BL003) in 3 files."), (output, proc.stderr)
        assert run_cli("check", "-q", "--output-format", output, ".", cwd=project).stderr == ""


# -- which files ----------------------------------------------------------------------------


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_a_git_ignored_directory_is_not_analysed(project: Path) -> None:
    write(project, {"vendored/copy.py": KEEPERS.replace("pkg.stream", "pkg.stream"), ".gitignore": "vendored/\n"})
    assert {path for _, path, _ in findings(run_cli("check", "--output-format", "json", ".", cwd=project))} == {
        "pkg/keepers.py", "vendored/copy.py"}  # no git work tree: nothing is ignored
    git(project, "init", "-q")
    assert {path for _, path, _ in findings(run_cli("check", "--output-format", "json", ".", cwd=project))} == {
        "pkg/keepers.py"}
    proc = run_cli("check", "--output-format", "json", "--no-respect-gitignore", ".", cwd=project)
    assert {path for _, path, _ in findings(proc)} == {"pkg/keepers.py", "vendored/copy.py"}
    configure(project, "respect-gitignore = false\n")
    assert {p for _, p, _ in findings(run_cli("check", "--output-format", "json", ".", cwd=project))} == {
        "pkg/keepers.py", "vendored/copy.py"}


def test_force_exclude_applies_excludes_to_named_files(project: Path) -> None:
    """pre-commit names every changed file; Ruff's force-exclude makes the excludes hold."""
    configure(project, 'extend-exclude = ["pkg/keepers.py"]\n')
    named = ("check", "--output-format", "json", "pkg/keepers.py")
    assert len(findings(run_cli(*named, cwd=project))) == 2  # named: analysed (Ruff's default)
    assert findings(run_cli(*named, "--force-exclude", cwd=project)) == []
    configure(project, 'extend-exclude = ["pkg/keepers.py"]\nforce-exclude = true\n')
    assert findings(run_cli(*named, cwd=project)) == []
    assert len(findings(run_cli(*named, "--no-force-exclude", cwd=project))) == 2
    write(project, {"gen/keepers.py": KEEPERS})
    configure(project, 'extend-exclude = ["gen"]\nforce-exclude = true\n')
    assert findings(run_cli("check", "--output-format", "json", "gen/keepers.py", cwd=project)) == []  # its folder
    proc = run_cli("check", "--output-format", "json", "--no-force-exclude", "gen/keepers.py", cwd=project)
    assert len(findings(proc)) == 2


def test_exclude_flags(project: Path) -> None:
    write(project, {"other/keepers.py": KEEPERS})
    every = {p for _, p, _ in findings(run_cli("check", "--output-format", "json", ".", cwd=project))}
    assert every == {"pkg/keepers.py", "other/keepers.py"}
    proc = run_cli("check", "--output-format", "json", "--extend-exclude", "other", ".", cwd=project)
    assert {p for _, p, _ in findings(proc)} == {"pkg/keepers.py"}
    proc = run_cli("check", "--output-format", "json", "--exclude", "other,build", ".", cwd=project)
    assert {p for _, p, _ in findings(proc)} == {"pkg/keepers.py"}


def test_extend_select_and_per_file_ignores(project: Path) -> None:
    configure(project, 'select = ["BL001"]\nextend-select = ["BL003"]\n')
    assert len(findings(run_cli("check", "--output-format", "json", ".", cwd=project))) == 2
    configure(project, tables='[tool.bufferlint.per-file-ignores]\n"pkg/keep*.py" = ["BL003"]\n')
    assert findings(run_cli("check", "--output-format", "json", ".", cwd=project)) == []
    configure(project, tables='[tool.bufferlint.per-file-ignores]\n"keepers.py" = ["BL001"]\n')
    assert len(findings(run_cli("check", "--output-format", "json", ".", cwd=project))) == 2
    configure(project, tables='[tool.bufferlint.per-file-ignores]\n"x.py" = ["BL9"]\n')
    proc = run_cli("check", ".", cwd=project)
    assert proc.returncode == 2 and "per-file-ignores 'x.py': unknown rule code or prefix 'BL9'" in proc.stderr


def test_show_settings_shows_the_new_keys(project: Path) -> None:
    configure(project, 'extend-select = ["BL003"]\nforce-exclude = true\noutput-format = "concise"\n',
              '[tool.bufferlint.per-file-ignores]\n"tests/*" = ["BL003"]\n')
    out = run_cli("check", "--show-settings", ".", cwd=project).stdout
    for line in ("extend-select = ['BL003']", "per-file-ignores = {'tests/*': ['BL003']}", "respect-gitignore = true",
                 "force-exclude = true", "output-format = concise", "extend-exclude = []"):
        assert line in out.splitlines()


# -- one severity per rule --------------------------------------------------------------------


def test_one_severity_per_rule_in_every_format(project: Path) -> None:
    assert RULES["BL003"].severity == "warning"
    sarif = json.loads(run_cli("check", "--output-format", "sarif", ".", cwd=project).stdout)["runs"][0]
    assert {r["level"] for r in sarif["results"]} == {"warning"}
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in sarif["tool"]["driver"]["rules"]}
    assert levels == {code: rule.severity for code, rule in RULES.items()}
    rdjson = json.loads(run_cli("check", "--output-format", "rdjson", ".", cwd=project).stdout)
    assert {d["severity"] for d in rdjson["diagnostics"]} == {"WARNING"}
    github = run_cli("check", "--output-format", "github", ".", cwd=project).stdout.splitlines()
    assert len(github) == 2 and all(line.startswith("::warning file=pkg/keepers.py,") for line in github)
    report = json.loads(run_cli("check", "--output-format", "json", ".", cwd=project).stdout)
    assert {f["severity"] for f in report["findings"]} == {"warning"}


def test_the_readme_rules_table_is_the_severity_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in readme.splitlines() if line.startswith("| BL0")]
    assert {row[1].strip(): row[3].strip() for row in rows} == {code: rule.severity for code, rule in RULES.items()}


# -- fix counts -----------------------------------------------------------------------------------


def test_statistics_counts_what_fix_fixes(tmp_path: Path) -> None:
    """--statistics' fixable count is what --fix applies with the same flags."""
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    stats = run_cli("check", "--statistics", ".", cwd=project)
    assert stats.stdout == ("1  BL002  guard-ignores-marker (1 fixable)\n"
                            "1 finding in 1 group (one per producer)\n")
    assert stats.stderr.endswith("1 fixable with `--fix`.\n")
    unsafe = run_cli("check", "--statistics", "--unsafe-fixes", "--select", "BL001", ".", cwd=project)
    assert unsafe.stderr.endswith("1 fixable with `--fix --unsafe-fixes`.\n")
    fixed = run_cli("check", "--diff", ".", cwd=project)
    assert fixed.stderr == "Would fix 1 finding (0 remaining).\n"
    fixed = run_cli("check", "--diff", "--unsafe-fixes", "--select", "BL001", ".", cwd=project)
    assert fixed.stderr == "Would fix 1 finding (0 remaining).\n"


def test_parser_refuses_abbreviations_everywhere() -> None:
    parser = cli.build_parser()
    assert parser.allow_abbrev is False
    for name, sub in parser._subparsers._group_actions[0].choices.items():
        assert sub.allow_abbrev is False or name == "fix", name
