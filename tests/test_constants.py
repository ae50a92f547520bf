"""Constants the pack conditions compare (``analysis/frontend/constants.py``): devices folded
the way torch builds them, checked against the real torch (CPU build: no device is needed
to construct a ``torch.device``)."""

from __future__ import annotations

import ast

import pytest

from bufferlint.analysis.frontend.constants import device_value, static_constant

torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "call",
    ['"cpu"', '"cuda"', '"cuda:1"', '"cuda", 0', '"cpu", 0', 'type="cuda", index=2', '"mps"', '"cuda", index=3'],
)
def test_a_folded_device_is_the_string_torch_makes(call: str) -> None:
    node = ast.parse(f"torch.device({call})", mode="eval").body
    known, value = static_constant(node, lambda _: (False, None), lambda f: ast.unparse(f))
    assert known
    assert value == str(eval(f"torch.device({call})"))


@pytest.mark.parametrize("call", ["dev", '"cuda", n', "*args", '"cuda:0", 1'])
def test_a_device_made_of_unknowns_is_not_folded(call: str) -> None:
    node = ast.parse(f"torch.device({call})", mode="eval").body
    assert static_constant(node, lambda _: (False, None), lambda f: ast.unparse(f)) == (False, None)


def test_torch_rejects_what_is_not_folded() -> None:
    """``torch.device("cuda:0", 1)`` names the index twice: torch refuses it, and so does the fold."""
    with pytest.raises(RuntimeError):
        torch.device("cuda:0", 1)
    assert device_value("cuda:0", 1) is None


def test_names_are_resolved_by_the_caller() -> None:
    node = ast.parse('torch.device(KIND, index=N)', mode="eval").body
    names = {"KIND": "cuda", "N": 1}
    known, value = static_constant(node, lambda n: (n.id in names, names.get(n.id)), lambda f: ast.unparse(f))
    assert (known, value) == (True, "cuda:1")
