"""Fixes: ``check --fix``, ``--unsafe-fixes``, ``--diff`` and ``bufferlint fix``.

Fixture pairs in ``tests/fixtures/fixes/`` (TorchFix style): ``NAME.py`` is the input and
``NAME.py.expected`` the file after ``--fix`` (``--fix --unsafe-fixes`` for the unsafe
ones). The first line of each input says where it goes in a project and which project::

    # fixture: path=sglang/srt/model_loader/utils.py project=sglang

``project=sglang`` copies ``support/`` (a condensed SGLang model_loader with the RunAI
iterator and an already-fixed guard) around it; ``project=bare`` is the file alone.
``bl003_no_fix.py`` has no ``.expected``: its findings get no fix, so nothing may change.
End-to-end tests run the real CLI in a subprocess; the rest run in-process.
"""

from __future__ import annotations

import ast
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bufferlint import cli
from bufferlint.analysis import analyze_project
from bufferlint.findings import Edit, Finding, Fix
from bufferlint.fixes import base as fix_base, planners as fix_planners, runner
from bufferlint.atomic import write_atomic
from bufferlint.fixes.apply import EditConflict, apply_edits, unified_diff
from bufferlint.fixes.runner import attach_fixes
from bufferlint.packs import builtin_vocabulary
from conftest import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fixes"

# fixture -> (extra CLI options, rule codes fixed)
CASES = {
    "bl002_string": ((), {"BL002"}),
    "bl002_constant": ((), {"BL002"}),
    "bl002_oneline_docstring": ((), {"BL002"}),
    "bl001_if_else": ((), {"BL001"}),
    "bl001_guard_import": ((), {"BL001"}),
    "bl001_guarded_submit": (("--unsafe-fixes",), {"BL001"}),
    "bl001_handoffs": (("--unsafe-fixes",), {"BL001"}),
    "bl003_fused_cache": (("--unsafe-fixes",), {"BL003"}),
    "bl003_stores": (("--unsafe-fixes",), {"BL003"}),
    "bl003_elements": (("--unsafe-fixes",), {"BL003"}),
}


def fixture_header(name: str) -> dict[str, str]:
    first = (FIXTURES / f"{name}.py").read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# fixture: ")
    return dict(part.split("=", 1) for part in first[len("# fixture: "):].split())


def make_project(tmp: Path, name: str, data: bytes | None = None) -> Path:
    """A project with fixture ``name`` in place; returns the fixture file's path."""
    header = fixture_header(name)
    root = tmp / "project"
    if header["project"] == "sglang":
        shutil.copytree(FIXTURES / "support", root)
    else:
        root.mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'fixture'\n", encoding="utf-8")
    target = root / header["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data if data is not None else (FIXTURES / f"{name}.py").read_bytes())
    return target

# fixtures whose fixes copy by rewriting an expression (a comprehension, a generator)
COPYING = {"bl001_handoffs", "bl003_elements"}


def expected(name: str) -> bytes:
    return (FIXTURES / f"{name}.py.expected").read_bytes()


# -- the fixtures, end to end -------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixture(tmp_path: Path, name: str) -> None:
    options, rules = CASES[name]
    target = make_project(tmp_path, name)
    before = run_cli("check", "--format", "json", str(target), cwd=target.parent)
    assert before.returncode == 1, before.stderr
    assert {rule for rule in rules} <= {line.split('"')[3] for line in before.stdout.splitlines() if '"rule"' in line}

    done = run_cli("check", "--fix", *options, str(target), cwd=target.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert target.read_bytes() == expected(name)
    assert "(0 remaining)." in done.stderr
    ast.parse(target.read_bytes())

    again = run_cli("check", "--fix", *options, str(target), cwd=target.parent)  # idempotent
    assert again.returncode == 0, again.stderr
    assert target.read_bytes() == expected(name)
    assert "Fixed 0 findings (0 remaining)." in again.stderr


def test_expected_files_keep_everything_outside_the_edits() -> None:
    """Comments and formatting outside the edits are kept. BL002 fixes only insert text;
    BL003 fixes only insert ``.clone()``; BL001 fixes keep every input line, in order (the
    submit statement moves into an if branch, one level deeper), except a ``use_async=``
    switch that is replaced; copying fixes rewrite only the lines they copy on."""
    for name in CASES:
        old_text = (FIXTURES / f"{name}.py").read_text(encoding="utf-8")
        new_text = expected(name).decode("utf-8")
        if name in COPYING:  # a line is rewritten to copy what it hands over or keeps
            old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
            assert len(old_lines) == len(new_lines), name
            changed = [(o, n) for o, n in zip(old_lines, new_lines) if o != n]
            assert changed and all(".clone()" in n and ".clone()" not in o for o, n in changed), name
            continue
        if name.startswith("bl003"):
            inserted = _inserted(old_text, new_text)
            assert inserted and set(inserted) == {".clone()"}, name
            continue
        if name.startswith("bl002"):
            assert "".join(_inserted(old_text, new_text)).strip(), name
            continue
        new = iter(new_text.splitlines())
        for line in old_text.splitlines():
            if "use_async=" in line or "executor.submit(" in line and "guarded_submit(" in new_text:
                continue
            assert any(line.strip() in candidate for candidate in new), (name, line)


def test_bl002_reproduces_upstream_shape() -> None:
    """The upstream fix (SGLang PR #32896, in 0.5.17): the check is the first statement,
    with the string literal, a blank line after it, and a docstring paragraph."""
    text = expected("bl002_string").decode()
    assert (
        '    (e.g., GIL contention) without benefit, so we do it synchronously.\n'
        "\n"
        "    Values marked `_sglang_runai_streamer_tensor` are zero-copy views into a\n"
    ) in text
    assert (
        '    """\n'
        '    if getattr(weight, "_sglang_runai_streamer_tensor", False):\n'
        "        return False\n"
        "\n"
        '    device = getattr(weight, "device", None)\n'
    ) in text
    assert "    if getattr(weight, RUNAI_STREAMER_TENSOR_ATTR, False):\n" in expected("bl002_constant").decode()


@pytest.mark.network
def test_bl002_on_the_real_sglang_file(tmp_path: Path, sglang_wheel) -> None:
    """Fixing 0.5.16's utils.py yields 0.5.17's should_async_load except for the wording of
    the docstring paragraph (ours is generic: it names the marker, not RunAI). The wheels
    are downloaded from PyPI (``sglang_wheel``)."""
    member = "sglang/srt/model_loader/utils.py"
    root = tmp_path / "project"
    target = root / member
    target.parent.mkdir(parents=True)
    (root / "pyproject.toml").write_text("", encoding="utf-8")
    original = sglang_wheel("0.5.16", member)
    target.write_bytes(original)
    done = run_cli("check", "--fix", "--select", "BL002", str(target), cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr

    def guard(text: str) -> list[str]:
        lines = text.splitlines()
        start = lines.index("def should_async_load(weight: torch.Tensor) -> bool:")
        end = lines.index("def maybe_executor_submit(")
        body = lines[start:end]
        cut = body.index("") if "" in body[:9] else None  # the docstring's new paragraph
        first_close = next(i for i, line in enumerate(body) if line.strip() == '"""')
        return body[:cut] + body[first_close:]

    fixed = target.read_text(encoding="utf-8")
    upstream = sglang_wheel("0.5.17", member).decode("utf-8")
    assert guard(fixed) == guard(upstream)
    assert guard(fixed) != guard(original.decode())
    # nothing else in the file changed: the fix only inserted the paragraph and the check
    inserted = "".join(_inserted(original.decode(), fixed))
    assert len(fixed) - len(original) == len(inserted)
    assert 'if getattr(weight, "_sglang_runai_streamer_tensor", False):' in fixed


def _inserted(old: str, new: str) -> list[str]:
    import difflib

    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    assert all(op in ("equal", "insert") for op, *_ in matcher.get_opcodes())
    return [new[j1:j2] for op, _, _, j1, j2 in matcher.get_opcodes() if op == "insert"]


def test_bl003_clones_at_each_kind_of_store() -> None:
    """One ``.clone()`` per store, on the stored value; inside a ``Parameter``, on its data
    (a cloned Parameter would be a plain tensor); on a multi-line value, at its end."""
    assert "                cached_a_proj[name] = loaded_weight.clone()\n" in expected("bl003_fused_cache").decode()
    text = expected("bl003_stores").decode()
    for line in (
        'pending.setdefault(prefix, {})[kind] = tensor.clone()  # until the partner arrives\n',
        "params[name].data = tensor.clone()\n",
        "model.get_submodule(prefix).weight = nn.Parameter(tensor.clone(), requires_grad=False)\n",
        "tensor.narrow(0, 0, 1).clone()  # first row, for the load report\n",
    ):
        assert line in text


def test_bl003_fix_is_unsafe(tmp_path: Path) -> None:
    """Cloning changes memory use (each kept view becomes an owned copy): only with
    ``--unsafe-fixes``."""
    target = make_project(tmp_path, "bl003_stores")
    original = target.read_bytes()
    done = run_cli("check", "--fix", str(target), cwd=target.parent)
    assert done.returncode == 1
    assert target.read_bytes() == original
    assert "Fixed 0 findings (4 remaining)." in done.stderr
    shown = run_cli("check", "--diff", "--unsafe-fixes", str(target), cwd=target.parent)
    assert shown.returncode == 1
    assert "+                params[name].data = tensor.clone()\n" in shown.stdout
    assert "Would fix 4 findings (0 remaining)." in shown.stderr
    assert target.read_bytes() == original


def test_bl003_no_fix_for_a_view_returned_after_its_loop(tmp_path: Path) -> None:
    """``return last`` after the loop is reported but gets no fix: nothing is written, even
    with ``--unsafe-fixes``."""
    target = make_project(tmp_path, "bl003_no_fix")
    original = target.read_bytes()
    checked = run_cli("check", "--format", "json", str(target), cwd=target.parent)
    lines = sorted(f["line"] for f in json.loads(checked.stdout)["findings"] if f["rule"] == "BL003")
    assert lines == [17], checked.stdout
    done = run_cli("check", "--fix", "--unsafe-fixes", str(target), cwd=target.parent)
    assert done.returncode == 1
    assert target.read_bytes() == original
    assert "Fixed 0 findings (1 remaining)." in done.stderr
    assert "error:" not in done.stderr  # no fix was offered, so none was rejected


def test_bl003_fix_attached_for_reporters(tmp_path, monkeypatch) -> None:
    target = make_project(tmp_path, "bl003_fused_cache")
    seen = []
    monkeypatch.setitem(cli.REPORTERS, "json", lambda result, cwd, color=False, root=None: seen.extend(result.findings) or "")
    monkeypatch.chdir(target.parent)
    assert cli.main(["check", "--format", "json", str(target)]) == 1
    (finding,) = seen
    assert finding.rule == "BL003" and finding.fix is not None and finding.fix.applicability == "unsafe"
    assert finding.fix.edits == (Edit(26, 52, 26, 52, ".clone()"),)
    assert finding.fix.message == "Keep an owned copy: `loaded_weight.clone()` at the store"


@pytest.mark.parametrize(
    ("statement", "fixed"),
    [
        ("self.kept[name] = weight", "self.kept[name] = weight.clone()"),
        ("kept.append(weight)", "kept.append(weight.clone())"),
        ("kept.insert(0, weight.t())", "kept.insert(0, weight.t().clone())"),
        ("self.kept.setdefault(name, weight)", "self.kept.setdefault(name, weight.clone())"),
        ("self.kept[name] = (weight)", "self.kept[name] = (weight.clone())"),
        ("self.kept[name] = torch.narrow(weight, 0, 0, 1)", "self.kept[name] = torch.narrow(weight, 0, 0, 1).clone()"),
        ("self.kept[name] = weight.T", "self.kept[name] = weight.T.clone()"),
        ("self.w: torch.Tensor = weight", "self.w: torch.Tensor = weight.clone()"),
        ("module.weight = nn.Parameter(weight)", "module.weight = nn.Parameter(weight.clone())"),
        ("self.kept[name] = (weight, name)", "self.kept[name] = (weight.clone(), name)"),
        # may not be one tensor: no fix

        ("self.kept[name] = [weight]", None),
        ("self.kept[name] = weight.chunk(2)", None),
        ("self.kept[name] = weight.numpy()", None),
        ("self.kept[name] = np.asarray(weight)", None),
        ("self.kept[name] = weight if name else None", None),
        ("self.kept[name] = transform(weight)", None),
        ("self.kept[name] = group", None),
        ("kept.extend([weight])", None),
    ],
)
def test_bl003_fix_shapes(tmp_path: Path, statement: str, fixed: str | None) -> None:
    """The fixer in-process on one store inside a loop over a marked stream."""
    text = (
        "import numpy as np\nimport torch\nfrom torch import nn\n\n\n"
        "def stream(tensors):\n"
        "    for name, tensor in tensors:\n"
        '        setattr(tensor, "_sglang_runai_streamer_tensor", True)\n'
        "        yield name, tensor\n\n\n"
        "class Loader:\n"
        "    def load(self, tensors, kept, module):\n"
        "        for name, weight in stream(tensors):\n"
        "            group = [weight]\n"
        f"            {statement}\n"
        "\n\ndef transform(w):\n    return w.t()\n"
    )
    path = tmp_path / "loader.py"
    path.write_text(text, encoding="utf-8")
    vocab = builtin_vocabulary()
    result = analyze_project(tmp_path, [path], [path], vocab)
    (finding,) = [f for f in result.findings if f.rule == "BL003" and f.span.line == 16]
    (finding,) = attach_fixes([finding], fix_base.Project(tmp_path, vocab, [path]))
    if fixed is None:
        assert finding.fix is None
    else:
        assert finding.fix.applicability == "unsafe"
        assert apply_edits(text, finding.fix.edits).splitlines()[15] == f"            {fixed}"


# -- applicability, --diff, the alias ---------------------------------------------------------


def test_unsafe_fix_needs_unsafe_fixes(tmp_path: Path) -> None:
    target = make_project(tmp_path, "bl001_guarded_submit")
    original = target.read_bytes()
    done = run_cli("check", "--fix", str(target), cwd=target.parent)
    assert done.returncode == 1
    assert target.read_bytes() == original
    assert "Fixed 0 findings (1 remaining)." in done.stderr

    unsafe = run_cli("check", "--diff", "--unsafe-fixes", str(target), cwd=target.parent)
    assert unsafe.returncode == 1 and "+from bufferlint.runtime import guarded_submit\n" in unsafe.stdout
    assert target.read_bytes() == original


def test_diff_prints_and_does_not_write(tmp_path: Path) -> None:
    target = make_project(tmp_path, "bl002_string")
    original = target.read_bytes()
    shown = run_cli("check", "--diff", str(target), cwd=target.parent)
    assert shown.returncode == 1, shown.stderr
    assert target.read_bytes() == original
    assert shown.stdout.startswith("--- utils.py\n+++ utils.py\n@@ ")
    assert '+    if getattr(weight, "_sglang_runai_streamer_tensor", False):\n' in shown.stdout
    assert "Would fix 1 finding (0 remaining)." in shown.stderr

    target.write_bytes(expected("bl002_string"))
    nothing = run_cli("check", "--diff", str(target), cwd=target.parent)
    assert (nothing.returncode, nothing.stdout) == (0, "")


def test_fix_alias_is_check_fix(tmp_path: Path) -> None:
    target = make_project(tmp_path, "bl001_if_else")
    done = run_cli("fix", str(target), cwd=target.parent)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == expected("bl001_if_else")
    assert "Fixed 2 findings (0 remaining)." in done.stderr


def test_guard_fix_removes_the_findings_it_controls(tmp_path: Path) -> None:
    """A call already decided by the (broken) guard is the guard's finding (a step of its
    BL002's trace; a BL001 with no fix of its own only when BL002 is not selected): fixing
    the guard removes it."""
    guard = make_project(tmp_path, "bl002_string")
    loader = guard.parents[1] / "models" / "deepseek.py"
    loader.parent.mkdir()
    loader.write_text(
        "from sglang.srt.model_loader.utils import maybe_executor_submit, should_async_load\n"
        "from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator\n\n\n"
        "def load_weights(params_dict, files, executor, futures, weight_loader):\n"
        "    params = dict(params_dict)\n"
        "    for name, loaded_weight in runai_safetensors_weights_iterator(files):\n"
        "        use_async_loading = should_async_load(loaded_weight)\n"
        "        param = params[name]\n"
        "        maybe_executor_submit(\n"
        "            executor=executor,\n"
        "            futures=futures,\n"
        "            use_async=use_async_loading,\n"
        "            func=weight_loader,\n"
        "            func_args=(param, loaded_weight, None),\n"
        "        )\n",
        encoding="utf-8",
    )
    root = guard.parents[3]
    before = loader.read_bytes()
    checked = run_cli("check", "--format", "json", ".", cwd=root)
    assert '"BL001"' not in checked.stdout and '"BL002"' in checked.stdout and "deepseek.py" in checked.stdout
    alone = run_cli("check", "--format", "json", "--select", "BL001", ".", cwd=root)
    assert '"BL001"' in alone.stdout
    done = run_cli("check", "--fix", ".", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Fixed 1 finding (0 remaining)." in done.stderr
    assert loader.read_bytes() == before
    assert run_cli("check", "--select", "BL001", ".", cwd=root).returncode == 0  # the call is safe now
    assert guard.read_bytes() == expected("bl002_string")


# -- encodings, line endings --------------------------------------------------------------------


def test_crlf_file_keeps_its_line_endings(tmp_path: Path) -> None:
    crlf = (FIXTURES / "bl002_string.py").read_bytes().replace(b"\n", b"\r\n")
    target = make_project(tmp_path, "bl002_string", crlf)
    done = run_cli("check", "--fix", str(target), cwd=target.parent)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == expected("bl002_string").replace(b"\n", b"\r\n")


def test_bl003_crlf_file_keeps_its_line_endings(tmp_path: Path) -> None:
    crlf = (FIXTURES / "bl003_stores.py").read_bytes().replace(b"\n", b"\r\n")
    target = make_project(tmp_path, "bl003_stores", crlf)
    done = run_cli("check", "--fix", "--unsafe-fixes", str(target), cwd=target.parent)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == expected("bl003_stores").replace(b"\n", b"\r\n")


def test_latin1_file_round_trips(tmp_path: Path) -> None:
    text = (FIXTURES / "bl002_string.py").read_text(encoding="utf-8")
    head, rest = text.split("\n", 1)
    cookie = "# -*- coding: latin-1 -*-\n"
    data = (head + "\n" + cookie + "# Déjà vu: garçon, naïve, façade\n" + rest).encode("latin-1")
    target = make_project(tmp_path, "bl002_string", data)
    done = run_cli("check", "--fix", str(target), cwd=target.parent)
    assert done.returncode == 0, done.stderr
    want = expected("bl002_string").decode("utf-8")
    head, rest = want.split("\n", 1)
    assert target.read_bytes() == (head + "\n" + cookie + "# Déjà vu: garçon, naïve, façade\n" + rest).encode("latin-1")


def test_bom_is_kept(tmp_path: Path) -> None:
    target = make_project(tmp_path, "bl002_string", b"\xef\xbb\xbf" + (FIXTURES / "bl002_string.py").read_bytes())
    done = run_cli("check", "--fix", str(target), cwd=target.parent)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == b"\xef\xbb\xbf" + expected("bl002_string")


# -- verification: a fix that does not work is not written ------------------------------------


def _bogus_planner(replacement: str):
    def candidates(finding: Finding, text: str, context) -> list[Fix]:
        return [Fix("safe", "bogus", (Edit(finding.span.line, 1, finding.span.line, 1, replacement),))]

    return candidates


@pytest.mark.parametrize(
    ("replacement", "reason"),
    [("# a comment changes nothing\n", "did not remove the finding"), ("def (\n", "breaks parsing")],
)
def test_failed_fix_is_not_written(tmp_path, monkeypatch, capsys, replacement: str, reason: str) -> None:
    target = make_project(tmp_path, "bl002_string")
    original = target.read_bytes()
    monkeypatch.setattr(fix_planners, "planners", lambda: {"BL002": _bogus_planner(replacement)})
    monkeypatch.chdir(target.parent)
    code = cli.main(["check", "--fix", str(target)])
    err = capsys.readouterr().err
    assert code == 1
    assert target.read_bytes() == original
    assert f"utils.py:12:1: error: fix for BL002 {reason}; not applied" in err
    assert "Fixed 0 findings (1 remaining)." in err
    assert not list(target.parent.glob("*.bufferlint-tmp"))


def test_an_offered_fix_that_breaks_parsing_is_not_offered(tmp_path, monkeypatch) -> None:
    """The verification of a shown fix still reads the syntax errors of the file it wrote."""
    target = make_project(tmp_path, "bl002_string")
    monkeypatch.setattr(fix_planners, "planners", lambda: {"BL002": _bogus_planner("def (\n")})
    seen = []
    monkeypatch.setitem(cli.REPORTERS, "json", lambda result, cwd, color=False, root=None: seen.extend(result.findings) or "")
    assert cli.main(["check", "--format", "json", "--jobs", "1", str(target)]) == 1
    assert [(f.rule, f.fix) for f in seen] == [("BL002", None)]


def test_verifying_fixes_checks_the_syntax_of_the_written_files_only(tmp_path, monkeypatch) -> None:
    """Each verification round analyses the shadow project again; only the files a fix wrote
    can have new syntax errors, so only those are compiled again (the others once, by the
    check itself)."""
    from bufferlint.analysis.frontend import syntax_check

    target = make_project(tmp_path, "bl002_string")
    others = [target.parent / f"plain_{i}.py" for i in range(3)]
    for other in others:
        other.write_text("x = 1\n", encoding="utf-8")
    checked: list[Path] = []
    real_check = syntax_check._check
    monkeypatch.setattr(syntax_check, "_check", lambda paths: checked.extend(paths) or real_check(paths))
    assert cli.main(["check", "--format", "json", "--jobs", "1", str(target.parent)]) == 1
    in_shadows = [path for path in checked if "bufferlint-fix-" in str(path)]
    assert in_shadows and {path.name for path in in_shadows} == {target.name}
    assert sorted(path.name for path in checked if path not in in_shadows) == sorted(
        [target.name] + [other.name for other in others] + [p.name for p in target.parent.glob("*.py")
                                                           if p != target and p not in others])


def test_fixes_are_attached_for_reporters(tmp_path, monkeypatch) -> None:
    """``check`` (without --fix) attaches Fix objects for the JSON/SARIF reporters."""
    target = make_project(tmp_path, "bl001_guarded_submit")
    seen = []
    monkeypatch.setitem(cli.REPORTERS, "json", lambda result, cwd, color=False, root=None: seen.extend(result.findings) or "")
    assert cli.main(["check", "--format", "json", str(target)]) == 1
    (finding,) = seen
    assert finding.fix is not None and finding.fix.applicability == "unsafe"
    assert finding.fix.edits[0] == Edit(7, 1, 7, 1, "from bufferlint.runtime import guarded_submit\n")
    assert {e.replacement for e in finding.fix.edits[1:]} == {"guarded_submit", "executor, "}


# -- units -------------------------------------------------------------------------------------


def test_apply_edits_positions_and_conflicts() -> None:
    text = "a = 1\r\nb = 2\n"
    assert apply_edits(text, [Edit(2, 1, 2, 2, "c"), Edit(1, 1, 1, 1, "# x\r\n")]) == "# x\r\na = 1\r\nc = 2\n"
    same = Edit(1, 1, 1, 1, "import os\n")
    assert apply_edits(text, [same, same]) == "import os\na = 1\r\nb = 2\n"  # identical edits count once
    with pytest.raises(EditConflict):
        apply_edits(text, [Edit(1, 1, 1, 4, "x"), Edit(1, 2, 1, 3, "y")])
    with pytest.raises(EditConflict):
        apply_edits(text, [Edit(9, 1, 9, 1, "x")])


def test_write_atomic_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    path.chmod(0o640)
    write_atomic(path, b"x = 2\n")
    assert path.read_bytes() == b"x = 2\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["m.py"]


def test_unified_diff_marks_missing_final_newline() -> None:
    diff = unified_diff("a\nb", "a\nc", "m.py")
    assert diff.endswith("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")


def test_pre_commit_fix_hook_is_declared() -> None:
    import yaml

    hooks = {hook["id"]: hook for hook in yaml.safe_load((Path(cli.__file__).parents[1] / ".pre-commit-hooks.yaml").read_text())}
    fix = hooks["bufferlint-fix"]
    assert fix["entry"] == "bufferlint fix"
    for key in ("language", "types_or", "require_serial"):
        assert fix[key] == hooks["bufferlint"][key]


def test_text_output_plans_no_fixes(tmp_path: Path, monkeypatch) -> None:
    """Planning a fix parses the file with LibCST; plain text output does not show fixes."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "loader.py").write_text((FIXTURES / "bl001_guarded_submit.py").read_text())
    planned = []
    monkeypatch.setattr(runner, "attach_fixes", lambda findings, project, **budget: planned.append(1) or findings)
    monkeypatch.chdir(project)
    assert cli.main(["check", "loader.py"]) == 1
    assert planned == []
    assert cli.main(["check", "--format", "json", "loader.py"]) == 1
    assert planned == [1]


def test_a_check_without_fixes_does_not_import_libcst(tmp_path: Path) -> None:
    """LibCST costs a third of a second to import: pre-commit's text check does without."""
    (tmp_path / "loader.py").write_text((FIXTURES / "bl001_guarded_submit.py").read_text())
    script = (
        "import sys\nfrom bufferlint.cli import main\n"
        "code = main(['check', '--no-cache', 'loader.py'])\n"
        "print(code, 'libcst' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert proc.stdout.split()[-2:] == ["1", "False"], proc.stderr


def test_statistics_count_the_fixes_that_work_once_the_guard_is_fixed(tmp_path: Path) -> None:
    """`if should_async_load(w): submit(...)` fixes nothing while the guard ignores the marker,
    so it is never offered; --fix applies it after the guard's fix, so --statistics counts it
    (SGLang 0.5.16: counted 3, --fix applied 5)."""
    guard = make_project(tmp_path, "bl002_string")
    loader = guard.parents[1] / "models" / "llama.py"
    loader.parent.mkdir()
    loader.write_text(
        "from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator\n\n\n"
        "def load_weights(params, files, executor, futures, weight_loader):\n"
        "    for name, loaded_weight in runai_safetensors_weights_iterator(files):\n"
        "        futures.append(executor.submit(weight_loader, params[name], loaded_weight))\n",
        encoding="utf-8",
    )
    root = guard.parents[3]
    report = json.loads(run_cli("check", "--output-format", "json", ".", cwd=root).stdout)
    offered = {f["rule"]: f["fix"] for f in report["findings"]}
    assert offered["BL002"]["applicability"] == "safe"
    assert offered["BL001"]["applicability"] == "unsafe"  # guarded_submit: the if/else alone fails
    stats = run_cli("check", "--statistics", ".", cwd=root)
    assert stats.stderr.endswith(" 2 fixable with `--fix`.\n"), stats.stderr  # without the guards' context: 1 (1 more)
    assert stats.stdout == ("1  BL001  borrowed-value-to-async-sink (1 fixable)\n1  BL002  guard-ignores-marker (1 fixable)\n"
                            "2 findings in 2 groups (one per producer)\n")
    diff = run_cli("check", "--diff", ".", cwd=root)
    assert "+        if should_async_load(loaded_weight):\n" in diff.stdout
    assert diff.stderr.endswith("Would fix 2 findings (0 remaining).\n"), diff.stderr
