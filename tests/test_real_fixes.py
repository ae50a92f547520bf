"""``benchmarks/real_fixes.py``'s judgement of a finding: it is the fix's when it is in the
fix's function, or when its trace starts there (a kept view is reported where it is kept, in
a caller, while the fix is in the producer's function)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import real_fixes  # noqa: E402

ITERATOR = '''\
def helper():
    return 1


def weights_iterator(files):
    with open_reader(files) as f:
        yield from f.tensors()
'''


def finding(path: str, function: str, source: tuple[str, int], rule: str = "BL003") -> dict:
    return {"rule": rule, "path": path, "function": function,
            "trace": [{"path": source[0], "line": source[1], "note": ""}]}


def test_a_finding_whose_trace_starts_in_the_fix_function_is_the_fixs(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "utils.py").write_text(ITERATOR, encoding="utf-8")
    fix = real_fixes.Fix("id", "url", "BL003", "pkg", "1", "2", "pkg/utils.py", "weights_iterator",
                         "pkg", "pkg/utils.py", "", "")
    lines = real_fixes.function_lines(tmp_path, fix.path, fix.function)
    assert lines == [range(5, 8)]
    kept_in_caller = finding("pkg/models.py", "pkg.models:Model.load_weights", ("pkg/utils.py", 7))
    sourced_elsewhere = finding("pkg/models.py", "pkg.models:Model.load_weights", ("pkg/utils.py", 2))
    other_rule = finding("pkg/models.py", "pkg.models:Model.load_weights", ("pkg/utils.py", 7), rule="BL001")
    in_function = finding("pkg/utils.py", "pkg.utils:weights_iterator", ("pkg/other.py", 1))
    found = [kept_in_caller, sourced_elsewhere, other_rule, in_function]
    assert real_fixes.reported(found, fix, fix.path, lines) == [kept_in_caller, in_function]
