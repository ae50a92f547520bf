"""No input breaks a run: whatever CPython compiles is analysed, whatever the nesting depth,
line endings or encoding; an internal error costs one function, not the run; a file LibCST
cannot parse loses its fixes with a word, never silently.

The projects are the bundled example (``examples/runai_loader``, one BL002, standing for the
BL001 it decides)
plus a generated file whose loop keeps a streamed view (BL003) around deep code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bufferlint.analysis.whole.program
from bufferlint import cli
from bufferlint.deepstack import COMPILED_DEPTH
from conftest import REPO, run_cli

EXAMPLE = REPO / "examples" / "runai_loader"
EXAMPLE_FINDINGS = [("BL002", "streamloader/executor_utils.py", 4, 1)]

# The deepest code CPython compiles is about COMPILED_DEPTH levels (bufferlint.deepstack);
# each shape below is generated this deep and checked to compile first.
DEPTH = COMPILED_DEPTH - 20
DEEP_SHAPES = {
    "elif chain": lambda n: "".join(f"        elif x == {i}:\n            pass\n" for i in range(n)),
    "sum of terms": lambda n: "        y = " + " + ".join(f"a{i}" for i in range(n)) + "\n",
    "unary operators": lambda n: "        y = " + "-" * n + "x\n",
    "attribute chain": lambda n: "        y = x" + ".a" * n + "\n",
    "call chain": lambda n: "        y = x" + "()" * n + "\n",
    "subscript chain": lambda n: "        y = x" + "[0]" * n + "\n",
    "conditional expressions": lambda n: "        y = " + "a if b else " * n + "x\n",
}


def example(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root)
    return root


def deep_module(shape: str, depth: int = DEPTH) -> str:
    """A loop that keeps every streamed view (BL003 at line 8) around ``depth``-deep code."""
    head = (
        "from streamloader.weights import stream_safetensors\n"
        "\n"
        "\n"
        "def keep_all(x, files, a, b):\n"
        "    kept = []\n"
        "    for name, w in stream_safetensors(files):\n"
        "        if x is None:\n"
        "            kept.append(w)\n"
    )
    body = DEEP_SHAPES[shape](depth)
    if shape != "elif chain":
        body = "        else:\n" + "\n".join("    " + line for line in body.splitlines()) + "\n"
    return head + body + "    return kept\n"


def findings(root: Path, *args: str) -> tuple[list[tuple], list[dict], subprocess.CompletedProcess]:
    run = run_cli("check", "--format", "json", *args, ".", cwd=root)
    report = json.loads(run.stdout)
    return [(f["rule"], f["path"], f["line"], f["column"]) for f in report["findings"]], report["errors"], run


# ---------------------------------------------------------------------------
# Depth


@pytest.mark.parametrize("shape", sorted(DEEP_SHAPES))
def test_code_as_deep_as_cpython_compiles_is_analysed(tmp_path: Path, shape: str) -> None:
    root = example(tmp_path)
    text = deep_module(shape)
    # valid Python: a fresh interpreter compiles it
    subprocess.run([sys.executable, "-c", "import sys; compile(sys.stdin.read(), 'deep.py', 'exec')"],
                   input=text, text=True, check=True)
    (root / "deep.py").write_text(text)
    # text output: JSON would also plan fixes, and LibCST's parser takes time quadratic in
    # the depth (~20 s at this depth); the fix planning is tested on shallower code below
    # concise: one line per finding (full text writes a producer's findings as one group)
    run = run_cli("check", "-q", "--output-format", "concise", ".", cwd=root)
    reported = [line.split(" ")[:2] for line in run.stdout.splitlines() if not line.startswith(" ")]
    assert reported == [["deep.py:8:13:", "BL003"], ["streamloader/executor_utils.py:4:1:", "BL002"]], (
        run.stdout + run.stderr)
    assert run.returncode == 1


def test_a_module_level_sum_of_500_terms_is_analysed(tmp_path: Path) -> None:
    root = example(tmp_path)
    (root / "table.py").write_text(
        "from streamloader.weights import stream_safetensors\n"
        "kept = []\n"
        "for name, w in stream_safetensors([]):\n"
        "    kept.append(w)\n"
        "TOTAL = " + " + ".join(f"a{i}" for i in range(500)) + "\n"
    )
    found, errors, run = findings(root)  # JSON plans fixes: LibCST walks the sum too
    assert errors == []
    assert found == EXAMPLE_FINDINGS + [("BL003", "table.py", 4, 5)]


def test_the_recursion_limit_is_restored_after_the_analysis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(example(tmp_path))
    before = sys.getrecursionlimit()
    assert cli.main(["check", "-q", "."]) == 1
    assert sys.getrecursionlimit() == before


# ---------------------------------------------------------------------------
# Internal errors


def test_an_internal_error_costs_one_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """Fault injection: the interpreter fails on one function (as an engine bug would)."""
    root = example(tmp_path)
    monkeypatch.chdir(root)
    real_run = bufferlint.analysis.whole.program.FunctionInterpreter.run

    def run(self):
        if self.info.qualname == "streamloader.loader.load_model":
            raise RuntimeError("a bug\nsecond line")
        return real_run(self)

    monkeypatch.setattr(bufferlint.analysis.whole.program.FunctionInterpreter, "run", run)
    assert cli.main(["check", "--format", "json", "."]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == [{
        "path": "streamloader/loader.py",
        "message": "internal error while analysing streamloader.loader:load_model (line 4): RuntimeError: a bug; "
        "please report this bufferlint bug (BUFFERLINT_DEBUG=1 shows the traceback)",
    }]
    # every other function is still analysed: the guard is still judged
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [("BL002", "streamloader/executor_utils.py")]


# ---------------------------------------------------------------------------
# A file LibCST cannot parse (CPython can): its findings lose their fix with a word

ODD_BUT_VALID = "\nODD = () if 0 else(lambda:())\n"  # LibCST 1.x raises TypeError on this (LibCST#1061)


def lost_fix_project(tmp_path: Path) -> Path:
    root = example(tmp_path)
    with (root / "streamloader/executor_utils.py").open("a") as handle:
        handle.write(ODD_BUT_VALID)
    return root


def test_lost_fix_in_json(tmp_path: Path) -> None:
    root = lost_fix_project(tmp_path)
    report = json.loads(run_cli("check", "--format", "json", ".", cwd=root).stdout)
    by_rule = {f["rule"]: f for f in report["findings"]}
    assert by_rule["BL002"]["fix"] is None
    assert by_rule["BL002"]["fix_error"].startswith("LibCST cannot parse this file (TypeError: ")


def test_lost_fix_in_sarif_and_text(tmp_path: Path) -> None:
    root = lost_fix_project(tmp_path)
    sarif = json.loads(run_cli("check", "--format", "sarif", ".", cwd=root).stdout)
    [invocation] = sarif["runs"][0]["invocations"]
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "warning" and note["associatedRule"] == {"id": "BL002"}
    assert note["message"]["text"].startswith("no fix for BL002: LibCST cannot parse this file (TypeError: ")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "streamloader/executor_utils.py"
    assert invocation["executionSuccessful"] is True  # the finding is reported; only its fix is missing
    diff = run_cli("check", "--diff", ".", cwd=root)
    assert "streamloader/executor_utils.py:4:1: warning: no fix for BL002: LibCST cannot parse this file" in diff.stderr


# ---------------------------------------------------------------------------
# Line endings and encodings: the same findings, columns and fixes


def restyle(root: Path, newline: bytes, encoding: str) -> None:
    """Rewrite every module with ``newline`` line endings, in ``encoding``, with a non-ASCII
    comment on the first line (a coding cookie where the encoding needs one)."""
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lead = "# -*- coding: latin-1 -*- café\n" if encoding == "latin-1" else "# café\n"
        data = ("\ufeff" if encoding == "utf-8-sig" else "") + lead + text
        path.write_bytes(data.replace("\n", newline.decode()).encode(encoding.replace("-sig", "") if encoding != "utf-8-sig" else "utf-8"))


STYLES = [(newline, encoding) for newline in (b"\n", b"\r\n", b"\r") for encoding in ("utf-8", "latin-1", "utf-8-sig")]


@pytest.mark.parametrize(("newline", "encoding"), STYLES)
def test_line_endings_and_encodings_give_the_same_findings_and_fixes(tmp_path: Path, newline: bytes, encoding: str) -> None:
    reference = example(tmp_path / "reference")
    restyle(reference, b"\n", "utf-8")
    styled = example(tmp_path / "styled")
    restyle(styled, newline, encoding)
    expected, _, _ = findings(reference)
    assert expected == [("BL002", "streamloader/executor_utils.py", 5, 1)]
    got, errors, _ = findings(styled)
    assert (got, errors) == (expected, [])
    # fixes keep the line endings and the encoding: the fixed files are the reference's fixed
    # files in this style
    for root in (reference, styled):
        assert run_cli("check", "--fix", "--unsafe-fixes", "-q", ".", cwd=root).returncode == 0
    for path in sorted(reference.rglob("*.py")):
        fixed = path.read_bytes().decode("utf-8")
        want = fixed.replace("\n", newline.decode())
        if encoding == "latin-1":
            want = want.replace("# café", "# -*- coding: latin-1 -*- café", 1)
        codec = "latin-1" if encoding == "latin-1" else "utf-8"
        prefix = "\ufeff" if encoding == "utf-8-sig" else ""
        assert (styled / path.relative_to(reference)).read_bytes() == (prefix + want).encode(codec), path.name


METHOD_DEMAND = {  # models.py mentions no source, marker or guard: it is parsed on demand
    "pkg/__init__.py": "",
    "pkg/weights.py": (
        "from runai_model_streamer import SafetensorsStreamer\n\n\n"
        "def stream(files):\n"
        "    with SafetensorsStreamer() as streamer:\n"
        "        streamer.stream_files(files)\n"
        "        for name, tensor in streamer.get_tensors():\n"
        "            yield name, tensor\n"
    ),
    "pkg/loader.py": "from pkg.weights import stream\n\n\ndef load(model, files):\n    model.load_weights(stream(files))\n",
    "pkg/models.py": (
        "import concurrent.futures\n\n\n"
        "class Model:\n"
        "    def load_weights(self, weights):\n"
        "        with concurrent.futures.ThreadPoolExecutor() as pool:\n"
        "            for name, w in weights:\n"
        "                pool.submit(print, w)\n"
    ),
}


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_file_parsed_on_demand_gives_the_same_findings_on_every_line_ending(tmp_path: Path, newline: str) -> None:
    for rel, text in METHOD_DEMAND.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.replace("\n", newline).encode())
    found, errors, _ = findings(tmp_path)
    assert (found, errors) == ([("BL001", "pkg/models.py", 8, 17)], [])


def test_defined_names_starts_lines_only() -> None:
    """The literal-first `def` scan finds what a line-anchored pattern finds: indented and
    `async` defs after "\\n" or "\\r", never `def` inside a word or after other code."""
    from bufferlint.analysis.frontend.textscan import defined_names

    text = b"def a(): pass\r  def b():\r\n\tasync  def c(x)\nundef d\nx = 1; def e\n  asyncdef f\n"
    assert defined_names(text) == ["a", "b", "c"]
