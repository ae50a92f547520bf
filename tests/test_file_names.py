"""File names are data: any name the OS allows is reported, in every format and in baselines.

Linux allows any bytes but ``/`` and NUL in a name: bytes that are not UTF-8 (Python sees
them as lone surrogates, ``os.fsdecode``) and control characters such as a newline. Each
format must still write valid output that names the file (SARIF percent-encodes the raw
bytes; the line-oriented formats escape them so one finding stays one line).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest

from conftest import run_cli
from test_formats import LOADER, schema, valid

NOT_UTF8 = os.fsdecode(b"pkg/bad\xff.py")
NEWLINE = "pkg/new\nline.py"


@pytest.fixture
def odd_names(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name in (NOT_UTF8, NEWLINE):
        (tmp_path / name).write_text(LOADER)
    return tmp_path


def check(root: Path, *args: str):
    proc = run_cli("check", *args, ".", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr
    return proc.stdout


def test_text_escapes_the_names(odd_names: Path) -> None:
    out = check(odd_names, "--output-format", "concise")
    assert [line.split(":")[0] for line in out.splitlines()] == ["pkg/bad\\xff.py", "pkg/new\\nline.py"]  # one line each
    full = check(odd_names)
    starts = [line.split(":")[0] for line in full.splitlines() if not line.startswith(" ")]
    assert starts == ["pkg/bad\\xff.py", "pkg/new\\nline.py"]
    assert all(line.startswith(("pkg/", "    pkg/", "    ... same first ")) for line in full.splitlines()
               if not line.startswith("  ") or line.startswith("    "))


def test_json_names_round_trip(odd_names: Path) -> None:
    report = json.loads(check(odd_names, "--format", "json"))
    assert [f["path"] for f in report["findings"]] == [NOT_UTF8, NEWLINE]


def test_sarif_uris_percent_encode_the_raw_bytes(odd_names: Path) -> None:
    out = check(odd_names, "--format", "sarif")
    out.encode("utf-8")  # valid UTF-8
    log = json.loads(out)
    valid(schema("sarif-schema-2.1.0.json"), log)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["pkg/bad%FF.py", "pkg/new%0Aline.py"]
    assert [unquote_to_bytes(u) for u in uris] == [os.fsencode(NOT_UTF8), os.fsencode(NEWLINE)]


def test_github_annotations_stay_one_line_each(odd_names: Path) -> None:
    lines = check(odd_names, "--format", "github").splitlines()
    assert [line.split(",")[0] for line in lines] == ["::error file=pkg/bad\\xff.py", "::error file=pkg/new%0Aline.py"]


@pytest.mark.parametrize("fmt", ["rdjson", "rdjsonl"])
def test_rdjson_names_round_trip(odd_names: Path, fmt: str) -> None:
    out = check(odd_names, "--format", fmt)
    diagnostics = json.loads(out)["diagnostics"] if fmt == "rdjson" else [json.loads(line) for line in out.splitlines()]
    assert [d["location"]["path"] for d in diagnostics] == [NOT_UTF8, NEWLINE]


def test_baseline_with_odd_names(odd_names: Path) -> None:
    proc = run_cli("check", "--write-baseline", "baseline.json", ".", cwd=odd_names)
    assert proc.returncode == 0, proc.stderr
    recorded = json.loads((odd_names / "baseline.json").read_bytes().decode("utf-8"))
    assert sorted(e["path"] for e in recorded["findings"]) == sorted([NOT_UTF8, NEWLINE])
    proc = run_cli("check", "--baseline", "baseline.json", ".", cwd=odd_names)
    assert proc.returncode == 0 and "2 baselined findings not shown, 0 fixed" in proc.stderr


def test_unreadable_file_errors_with_odd_names(odd_names: Path) -> None:
    (odd_names / os.fsdecode(b"pkg/broken\xfe\x1b.py")).write_text("def f(:\n")
    for fmt in ("text", "sarif", "github"):
        proc = run_cli("check", "--format", fmt, ".", cwd=odd_names)
        assert proc.returncode == 2 and "internal error" not in proc.stderr
        assert ("broken%FE%1B.py" if fmt == "sarif" else "broken\\xfe\\x1b.py") in proc.stdout
        assert "\x1b" not in proc.stdout
