"""The fixture corpus: one file (or small package) per behaviour of the analysis, with the
expected findings beside it in ``<name>.expected`` (``path:line: RULE`` per line), and the
same expectation written on the reported line for the reader (Semgrep's test annotations):

* ``# expect: RULE``: reported, and rightly so;
* ``# known-fp: RULE``: reported, but a false alarm we accept for now (listed in .expected);
* ``# todo-expect: RULE``: a real bug we do not report yet. The test fails if it starts
  being reported, so the annotation is promoted to ``expect`` when the gap closes.

Known gaps are counted and printed at the end of every run (``conftest.py``), so they stay
visible instead of absent. Each fixture is analysed as a project of its own.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.packs import builtin_vocabulary

FIXTURES = Path(__file__).parent / "fixtures" / "analysis"
EXPECT = re.compile(r"#\s*(?:expect|known-fp):\s*(BL\d{3})")
TODO = re.compile(r"#\s*todo-expect:\s*(BL\d{3})")
CASES = sorted(p for p in FIXTURES.iterdir() if p.suffix == ".py" or p.is_dir())


def project(case: Path, tmp_path: Path) -> Path:
    root = tmp_path / case.stem
    if case.is_dir():
        shutil.copytree(case, root)
    else:
        root.mkdir()
        shutil.copy(case, root / case.name)
    return root


def annotated(root: Path, pattern: re.Pattern = EXPECT) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for rule in pattern.findall(line):
                out.append(f"{path.relative_to(root).as_posix()}:{number}: {rule}")
    return sorted(out)


def expected(case: Path) -> list[str]:
    text = case.with_name(case.stem + ".expected").read_text(encoding="utf-8")
    return sorted(line.strip() for line in text.splitlines() if line.strip())


def found(root: Path) -> list[str]:
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, builtin_vocabulary())
    assert result.errors == []
    return sorted(f"{f.path.relative_to(root).as_posix()}:{f.span.line}: {f.rule}" for f in result.findings)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_fixture_findings(case: Path, tmp_path: Path) -> None:
    root = project(case, tmp_path)
    assert found(root) == expected(case)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_expected_file_matches_annotations(case: Path, tmp_path: Path) -> None:
    assert annotated(project(case, tmp_path)) == expected(case)


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_known_gaps_are_still_gaps(case: Path, tmp_path: Path) -> None:
    """A ``todo-expect`` line that is now reported is a closed gap: promote it to ``expect``."""
    root = project(case, tmp_path)
    closed = set(annotated(root, TODO)) & set(found(root))
    assert not closed, f"now reported, change todo-expect to expect: {sorted(closed)}"


def test_every_reported_trace_starts_at_a_source_and_ends_at_the_sink(tmp_path: Path) -> None:
    root = project(FIXTURES / "cross_module", tmp_path)
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, builtin_vocabulary())
    by_line = {(f.path.name, f.span.line): f for f in result.findings}
    finding = by_line[("loader.py", 20)]
    notes = [step.note for step in finding.trace]
    assert "marked borrowed" in notes[0]
    assert any("returned by `iterate_weights(...)`" in n for n in notes)
    assert any("element taken by `for name, weight in ...`" in n for n in notes)
    assert "consumed asynchronously" in notes[-1]
    assert finding.function == "pkg.loader:Loader.load_into"
    assert finding.subject == "weight"


CONFIGURED = sorted((Path(__file__).parent / "fixtures" / "analysis_config").iterdir())


@pytest.mark.parametrize("case", CONFIGURED, ids=[c.name for c in CONFIGURED])
def test_a_user_pack_in_pyproject_describes_a_new_producer(case: Path, tmp_path: Path) -> None:
    """Sources, markers, guards and sinks declared in [tool.bufferlint], end to end
    (``users_word``: a declared source wins over the tree's own definition of it)."""
    from bufferlint.config import load_settings

    root = tmp_path / "project"
    shutil.copytree(case, root)
    settings = load_settings(root)
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, settings.vocab)
    assert result.errors == []
    got = sorted(f"{f.path.relative_to(root).as_posix()}:{f.span.line}: {f.rule}" for f in result.findings)
    assert got == annotated(root)


@pytest.mark.parametrize("case", ["broken_guard", "cross_module", "aliasing.py", "reidentified.py"])
def test_output_does_not_depend_on_hash_order(case: str, tmp_path: Path) -> None:
    """Traces are chosen deterministically: baselines and SARIF diffs stay stable across runs."""
    import os
    import subprocess
    import sys

    root = project(FIXTURES / case, tmp_path)
    outputs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-m", "bufferlint", "check", "--format", "json", "--project-root", str(root), str(root)],
            cwd=root, env=env, capture_output=True, text=True,
        )
        assert proc.returncode == 1, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1] == outputs[2]


def test_a_cached_view_read_back_later_is_in_the_store_trace(tmp_path: Path) -> None:
    root = project(FIXTURES / "retention.py", tmp_path)
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, builtin_vocabulary())
    (finding,) = [f for f in result.findings if f.span.line == 28]
    assert finding.rule == "BL003"
    assert "kept in `cached_a_proj`" in finding.trace[-2].note
    assert finding.trace[-1].note == "read back from `cached_a_proj` after the producer moved on"
    assert finding.trace[-1].line == 30  # the torch.cat that fuses the cached views


def test_read_back_is_in_the_trace_through_a_helper_summary(tmp_path: Path) -> None:
    root = project(FIXTURES / "retention.py", tmp_path)
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, builtin_vocabulary())
    (finding,) = [f for f in result.findings if f.function == "retention:fuse_pairs"]
    notes = [step.note for step in finding.trace]
    assert "passed to `fuse_pairs(...)`" in notes
    assert notes[-1] == "read back from `pending` after the producer moved on"


def test_objects_made_one_at_a_call_keep_the_preferred_trace(tmp_path: Path) -> None:
    """The two objects ``all_weights`` hands back (one per call of ``stream``) are one at
    ``load``'s call of it; the trace kept goes through the first ``yield from`` (line 15),
    the one ``preferred_trace`` picks, whatever order a set holds them in (six hash seeds)."""
    import json
    import os
    import subprocess
    import sys

    root = project(FIXTURES / "reidentified.py", tmp_path)
    for seed in ("0", "1", "2", "3", "4", "5"):
        proc = subprocess.run(
            [sys.executable, "-m", "bufferlint", "check", "--no-cache", "--format", "json", str(root)],
            cwd=root, env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True,
        )
        (finding,) = json.loads(proc.stdout)["findings"]
        lines = [step["line"] for step in finding["trace"]]
        assert 15 in lines and 17 not in lines, (seed, lines)
