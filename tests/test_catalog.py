"""The rule catalog: docs are complete, and the examples are the engine's specification.

``test_invalid_examples`` / ``test_valid_examples`` run each example through the real
engine; the others check the catalog itself.
"""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.catalog import RULES, Invalid, Valid, get_rule
from bufferlint.catalog.rule import DOC_SECTIONS, OPTIONAL_SECTIONS
from bufferlint.fixes.planners import FIXERS, planners
from bufferlint.packs import builtin_vocabulary

EXAMPLES = [
    pytest.param(rule, example, id=f"{rule.code}-{kind}{i}")
    for rule in RULES.values()
    for kind, examples in (("invalid", rule.invalid), ("valid", rule.valid))
    for i, example in enumerate(examples)
]


def test_codes_and_names() -> None:
    assert list(RULES) == ["BL001", "BL002", "BL003", "BL004", "BL005", "BL006"]
    for code, rule in RULES.items():
        assert rule.code == code
        assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.name)
        assert rule.summary and "\n" not in rule.summary and not rule.summary.endswith(".")
    assert len({r.name for r in RULES.values()}) == len(RULES)
    assert RULES["BL001"].summary == "borrowed value reaches an async sink without a guard"
    assert RULES["BL002"].summary == "guard ignores the borrowed-value marker"
    assert RULES["BL003"].name == "borrowed-view-outlives-step"
    assert RULES["BL004"].name == "non-blocking-copy-from-borrowed-view"
    assert RULES["BL005"].name == "read-before-device-sync"
    assert RULES["BL006"].name == "host-buffer-reused-under-async-copy"


@pytest.mark.parametrize("rule", RULES.values(), ids=list(RULES))
def test_doc_has_the_core_sections_then_optional_ones(rule) -> None:
    headings = [line for line in rule.doc.splitlines() if line.startswith("#")]
    assert tuple(headings[: len(DOC_SECTIONS)]) == DOC_SECTIONS
    optional = headings[len(DOC_SECTIONS):]
    assert all(h in OPTIONAL_SECTIONS for h in optional), optional
    assert optional == sorted(optional, key=OPTIONAL_SECTIONS.index), "optional sections out of order"
    if rule.code in planners():
        assert "## Fix safety" in optional, "a rule with a fixer says how safe its fixes are"
    assert rule.doc.startswith(DOC_SECTIONS[0])
    for section in re.split(r"^## .*$", rule.doc, flags=re.M)[1:]:
        assert section.strip(), "empty section"
    for block in re.findall(r"```python\n(.*?)```", rule.doc, flags=re.S):
        ast.parse(block)


@pytest.mark.parametrize("rule", RULES.values(), ids=list(RULES))
def test_rule_has_both_kinds_of_examples(rule) -> None:
    assert rule.invalid and rule.valid
    assert all(isinstance(e, Invalid) and e.lines for e in rule.invalid)
    assert all(isinstance(e, Valid) for e in rule.valid)


@pytest.mark.parametrize(("rule", "example"), EXAMPLES)
def test_examples_are_complete_modules(rule, example) -> None:
    tree = ast.parse(example.code)
    assert isinstance(tree.body[0], ast.Expr)  # a module docstring saying what it is
    imported = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    module_names = imported | defined | assigned
    # every name a function reads at module level is defined or imported in the example
    for func in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        local = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
        local |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                assert node.id in module_names | local | set(dir(builtins)), f"{func.name} uses undefined {node.id}"
    assert not Path(example.path).is_absolute() and example.path.endswith(".py")


@pytest.mark.parametrize("rule", RULES.values(), ids=list(RULES))
def test_invalid_lines_point_at_the_offending_code(rule) -> None:
    anchors = {
        "BL001": (".submit(",),
        "BL002": ("def should_async_load(",),
        "BL003": ("] = loaded_weight", ".data = loaded_weight", "Parameter(loaded_weight", "list(weights)"),
        "BL004": ("non_blocking=True", ".copy_("),
        "BL005": (".tolist()", "if "),
        "BL006": (".copy_(batch)", "] = "),
    }[rule.code]
    for example in rule.invalid:
        lines = example.code.splitlines()
        for line in example.lines:
            assert any(anchor in lines[line - 1] for anchor in anchors), lines[line - 1]


def test_examples_tell_the_runai_story() -> None:
    """The rules about a producer's reused buffer (BL005 is about the device's copies)."""
    marker = "_sglang_runai_streamer_tensor"
    assert marker in builtin_vocabulary().markers
    for rule in (RULES[code] for code in ("BL001", "BL002", "BL003", "BL004")):
        for example in (*rule.invalid, *rule.valid):
            assert 'setattr(tensor, RUNAI_STREAMER_TENSOR_ATTR, True)' in example.code
            assert marker in example.code


def test_get_rule() -> None:
    assert get_rule("BL001") is RULES["BL001"]
    assert get_rule("bl002") is RULES["BL002"]
    assert get_rule("guard-ignores-marker") is RULES["BL002"]
    assert get_rule("bl003") is RULES["BL003"]
    assert get_rule("non-blocking-copy-from-borrowed-view") is RULES["BL004"]
    assert get_rule("read-before-device-sync") is RULES["BL005"]
    assert get_rule("host-buffer-reused-under-async-copy") is RULES["BL006"]
    with pytest.raises(KeyError):
        get_rule("BL007")


@pytest.mark.parametrize("code", ["BL003", "BL004"])
def test_new_rules_say_what_to_do(code: str) -> None:
    """The docs name the fixes the finding messages name: clone at the store or an owned
    producer (BL003); synchronise in the iteration or copy blocking (BL004)."""
    doc = RULES[code].doc
    assert "owned=True" in doc and "runai-model-streamer >= 0.17" in doc
    if code == "BL003":
        assert ".clone()" in doc and "list(weights)" in doc
    else:
        assert "torch.cuda.synchronize()" in doc and "stream.synchronize()" in doc and "blocking" in doc


# ---------------------------------------------------------------------------
# The examples through the engine: the specification


def run_example(tmp_path: Path, example) -> list[tuple[str, int]]:
    path = tmp_path / example.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(example.code, encoding="utf-8")
    result = analyze_project(tmp_path, [path], [path], builtin_vocabulary())
    assert result.errors == []
    return sorted((f.rule, f.span.line) for f in result.findings)


@pytest.mark.parametrize(
    ("rule", "example"), [p for p in EXAMPLES if isinstance(p.values[1], Invalid)]
)
def test_invalid_examples(tmp_path: Path, rule, example: Invalid) -> None:
    found = [f for f in run_example(tmp_path, example) if f[0] == rule.code]
    assert found == sorted((rule.code, line) for line in example.lines)


@pytest.mark.parametrize(
    ("rule", "example"), [p for p in EXAMPLES if isinstance(p.values[1], Valid)]
)
def test_valid_examples(tmp_path: Path, rule, example: Valid) -> None:
    assert [f for f in run_example(tmp_path, example) if f[0] == rule.code] == []


FIXED = [
    pytest.param(rule, example, id=f"{rule.code}-invalid{i}")
    for rule in RULES.values()
    for i, example in enumerate(rule.invalid)
    if example.fixed
]


def test_a_rule_has_fixes_exactly_when_one_fixer_repairs_it() -> None:
    """The rules whose examples show a fix are those with a planner, each with exactly one
    fixer module, which names the catalog's own entry."""
    showing = {code for code, rule in RULES.items() if any(example.fixed for example in rule.invalid)}
    assert set(planners()) == showing
    assert len(FIXERS) == len(planners()), "two fixer modules name the same rule"
    for fixer in FIXERS:
        assert RULES[fixer.RULE.code] is fixer.RULE
        assert planners()[fixer.RULE.code] is fixer.candidates


@pytest.mark.parametrize(("rule", "example"), FIXED)
def test_examples_run_their_fixes(tmp_path: Path, rule, example) -> None:
    """The rule's fixer turns the invalid example into its ``fixed`` form, verified by the
    real ``check --fix`` (re-analysis included): nothing of the rule remains."""
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'example'\n", encoding="utf-8")
    target = tmp_path / example.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(example.code, encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-m", "bufferlint", "check", "--fix", "--unsafe-fixes", str(target),
         *(["--extend-select", rule.code] if rule.preview else [])],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )
    assert target.read_text(encoding="utf-8") == example.fixed_code(), done.stderr
    assert "(0 remaining)." in done.stderr
