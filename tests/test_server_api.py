"""What the language server needs from the API: unsaved editor text (``CheckOptions.overlays``)
read in place of the files on disk by every reader, a cache that is never wrong across runs
with and without overlays, and noqa directives returned as text (``noqa.noqa_text``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bufferlint import api
from bufferlint.noqa import noqa_text
from bufferlint.source import overlaid, read_bytes, read_source
from conftest import REPO

EXAMPLE = REPO / "examples" / "runai_loader"
FIXED_GUARD = (EXAMPLE / "streamloader" / "executor_utils.py").read_text().replace(
    '    device = getattr(weight, "device", None)\n',
    '    if getattr(weight, "_sglang_runai_streamer_tensor", False):\n        return False\n'
    '    device = getattr(weight, "device", None)\n',
)  # the upstream fix: the marker checked first


@pytest.fixture
def example(tmp_path: Path) -> Path:
    root = tmp_path / "runai_loader"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", ".bufferlint_cache"))
    return root


def rules(report: api.Report) -> list[tuple[str, str, int]]:
    assert report.error is None, report.error
    return sorted((f.rule, f.path.name, f.span.line) for f in report.findings)


def check(root: Path, overlays: dict | None = None, cache: bool = False, fixes: bool = False) -> api.Report:
    return api.check(api.CheckOptions(paths=[root], overlays=overlays or {}, cache=cache, fixes=fixes))


def test_an_overlay_is_analysed_instead_of_the_file_on_disk(example: Path) -> None:
    guard = example / "streamloader" / "executor_utils.py"
    on_disk = rules(check(example))
    assert [rule for rule, _, _ in on_disk] == ["BL002"]  # it stands for the loader's call it decides
    assert rules(check(example, {guard: FIXED_GUARD})) == []  # the guard fixed in the editor, not saved
    assert rules(check(example)) == on_disk  # the overlay lasted one run


def test_the_cache_hashes_the_overlay_so_it_is_never_wrong(example: Path) -> None:
    guard = example / "streamloader" / "executor_utils.py"
    disk = rules(check(example))
    edited = rules(check(example, {guard: FIXED_GUARD}))
    # Alternate runs with and without the overlay through one cache: each gives what a run
    # without the cache gives for the same text.
    for overlays, expected in (({guard: FIXED_GUARD}, edited), ({}, disk), ({guard: FIXED_GUARD}, edited), ({}, disk)):
        assert rules(check(example, overlays, cache=True)) == expected
    check(example, {guard: FIXED_GUARD}, cache=True)
    guard.write_text(FIXED_GUARD)  # now saved: the analysis recorded for the overlay holds
    saved = check(example, cache=True)
    assert rules(saved) == edited
    assert saved.cache == "the last analysis reused"


def test_a_syntax_error_in_an_overlay_is_a_file_error_and_the_rest_is_analysed(example: Path) -> None:
    loader = example / "streamloader" / "loader.py"
    report = check(example, {loader: "def load_model(model, files:\n    pass\n"})
    assert [(e.path, e.message.split(":")[0]) for e in report.errors] == [(loader, "syntax error at line 1, column 15")]
    assert [f.rule for f in report.findings] == ["BL002"]  # the guard is still reported


def test_an_overlay_keeps_its_declared_encoding(example: Path) -> None:
    latin = example / "streamloader" / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\nNAME = 'caf\u00e9'\n".encode("latin-1"))
    overlay = "# -*- coding: latin-1 -*-\nNAME = 'th\u00e9'\n"
    with overlaid({latin: overlay}):
        assert read_bytes(latin) == overlay.encode("latin-1")  # the bytes a save would write
        assert read_source(latin).text == overlay
    assert check(example, {latin: overlay}).errors == []
    cannot = check(example, {latin: overlay + "SNAKE = '\U0001F40D'\n"})
    assert [e.message.split(" (")[0] for e in cannot.errors] == [
        "the editor's text cannot be encoded as iso-8859-1, its declared encoding"]


def test_fix_applies_to_the_overlay_and_never_writes_it(example: Path) -> None:
    guard = example / "streamloader" / "executor_utils.py"
    on_disk = guard.read_text()
    unsaved = on_disk.replace("def maybe_submit", "# edited, not saved\ndef maybe_submit")
    options = api.CheckOptions(paths=[guard], overlays={guard: unsaved}, cache=False)
    fixed = api.fix(options, write=False)
    assert isinstance(fixed, api.FixReport), getattr(fixed, "error", None)
    old, new = fixed.changed[guard]
    assert old == unsaved and "# edited, not saved" in new and "_sglang_runai_streamer_tensor" in new
    assert fixed.outcome.fixed == 1 and fixed.report.findings == []
    assert guard.read_text() == on_disk  # nothing written
    refused = api.fix(options)
    assert isinstance(refused, api.Report) and refused.error.startswith("fixes of overlaid (unsaved) files cannot be written")
    assert guard.read_text() == on_disk


def test_noqa_text_returns_the_suppressed_text_and_writes_nothing(example: Path) -> None:
    models = example / "streamloader" / "models.py"
    text = models.read_text()
    finding = next(f for f in api.check(api.CheckOptions(paths=[models], cache=False)).findings)  # the call's BL001
    new = noqa_text(text, [finding])
    assert new is not None and models.read_text() == text
    assert new.splitlines()[finding.span.line - 1].endswith("  # noqa: BL001")
    assert rules(api.check(api.CheckOptions(paths=[models], overlays={models: new}, cache=False))) == []
    assert noqa_text(new, [finding]) == new  # already suppressed: nothing to add
    assert noqa_text("def broken(:\n", [finding]) is None


def test_the_server_without_its_extra_is_a_one_line_usage_error(tmp_path: Path) -> None:
    # pygls made unimportable, as in an install without the `lsp` extra
    code = "import sys; sys.modules['pygls'] = None; from bufferlint.cli import main; sys.exit(main(['server']))"
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stderr.startswith("bufferlint: error: `bufferlint server` needs pygls: pip install 'bufferlint[lsp]'")
    assert len(proc.stderr.splitlines()) == 1


def test_plan_fixes_plans_what_check_with_fixes_plans(example: Path) -> None:
    guard = example / "streamloader" / "executor_utils.py"
    unsaved = guard.read_text().replace("def maybe_submit", "# edited\ndef maybe_submit")
    plain = check(example, {guard: unsaved})
    assert all(f.fix is None for f in plain.findings)
    planned = api.plan_fixes(plain, {guard: unsaved})
    assert planned.findings == check(example, {guard: unsaved}, fixes=True).findings
    assert [f.fix is not None for f in planned.findings] == [True]


def test_fix_verification_sees_the_other_overlaid_files(example: Path) -> None:
    # Fixes are verified in a tree of symlinks to the project's files: an unsaved file
    # other than the fixed one must be read there as the editor has it, not as on disk.
    guard = example / "streamloader" / "executor_utils.py"
    models = example / "streamloader" / "models.py"
    in_editor = models.read_text()
    models.write_text(in_editor.replace("for name, loaded_weight in weights:", "for name, loaded_weight in"))  # on disk: broken
    options = api.CheckOptions(paths=[guard, models], overlays={models: in_editor}, cache=False)
    fixed = api.fix(options, write=False)
    assert isinstance(fixed, api.FixReport), getattr(fixed, "error", None)
    assert list(fixed.changed) == [guard] and fixed.outcome.rejections == []
    assert fixed.report.errors == [] and fixed.report.findings == []  # the guard's fix removed BL001 in the editor's text
