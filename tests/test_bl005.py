"""BL005's fixes on the fixture corpus's shapes: copy blocking (safe) first, a synchronisation
before the read (unsafe) where a line can go between the copy and the read, nothing where
the copy belongs to a helper."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

from bufferlint.analysis import analyze_project
from bufferlint.fixes import base as fix_base
from bufferlint.fixes import bl005
from bufferlint.fixes.apply import apply_edits
from bufferlint.packs import builtin_vocabulary

FIXTURE = Path(__file__).parent / "fixtures" / "analysis" / "device_to_host.py"


def fixes_by_line(tmp_path: Path) -> tuple[str, dict[int, list[tuple[str, list[str]]]]]:
    path = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, path)
    text = path.read_text(encoding="utf-8")
    vocab = builtin_vocabulary()
    result = analyze_project(tmp_path, [path], [path], vocab)
    context = fix_base.FixContext(fix_base.Project(tmp_path, vocab, [path]), path)
    out = {}
    for finding in result.findings:
        fixed = []
        for fix in bl005.candidates(finding, text, context):
            diff = difflib.ndiff(text.splitlines(), apply_edits(text, fix.edits).splitlines())
            fixed.append((fix.applicability, [line[2:] for line in diff if line.startswith("+ ")]))
        out[finding.span.line] = fixed
    return text, out


def test_fix_candidates(tmp_path: Path) -> None:
    _, fixes = fixes_by_line(tmp_path)
    assert fixes[9] == [
        ("safe", ['    host = gpu.to("cpu")']),
        ("unsafe", ["    torch.cuda.current_stream().synchronize()"]),
    ]
    # A truth test of the copy itself: only copy blocking, of the operand that is read.
    assert fixes[35] == [("safe", ['        scale.any().to("cpu")  # expect: BL005'])]
    assert fixes[36] == [("safe", ['        or shift.any().to("cpu")  # expect: BL005'])]
    assert fixes[30][0] == ("safe", ['    host = gpu.to("cpu:0")'])
    # The copy handed to a helper that reads it: the copy is here, so both fixes apply.
    assert [a for a, _ in fixes[117]] == ["safe", "unsafe"]
    # The copy is a helper's (`fetch`): other callers share it, no fix.
    assert fixes[84] == [] and fixes[136] == []


def test_fixes_remove_the_finding(tmp_path: Path) -> None:
    """Each candidate, applied alone, leaves no BL005 at its line (re-analysed)."""
    text, _ = fixes_by_line(tmp_path)
    path = tmp_path / FIXTURE.name
    vocab = builtin_vocabulary()
    context = fix_base.FixContext(fix_base.Project(tmp_path, vocab, [path]), path)
    findings = analyze_project(tmp_path, [path], [path], vocab).findings
    finding = next(f for f in findings if f.span.line == 55)
    for fix in bl005.candidates(finding, text, context):
        path.write_text(apply_edits(text, fix.edits), encoding="utf-8")
        after = analyze_project(tmp_path, [path], [path], vocab).findings
        assert len([f for f in after if f.rule == "BL005"]) == len(findings) - 1, fix.message
