"""What ``rules/torch.toml`` says of numpy's function-style views, checked on the real numpy:
each returns (a list of) arrays sharing the argument's memory, so a view of a borrowed buffer
handed on through one of them reads the same reused bytes."""

from __future__ import annotations

import tomllib

import pytest

from conftest import REPO

np = pytest.importorskip("numpy")

VIEWS = [
    name for name in tomllib.loads((REPO / "rules" / "torch.toml").read_text())["views"]
    if name.startswith("numpy.") and "(" not in name and name != "numpy.ndarray"
]

# The arguments after the array each view function needs (the rest take the array alone).
ARGS = {
    "numpy.split": (2,), "numpy.array_split": (3,), "numpy.hsplit": (2,), "numpy.vsplit": (2,),
    "numpy.dsplit": (2,), "numpy.swapaxes": (0, 1), "numpy.moveaxis": (0, 1), "numpy.expand_dims": (0,),
    "numpy.broadcast_to": ((2, 4, 6, 2),), "numpy.reshape": ((48,),),
    "numpy.lib.stride_tricks.as_strided": ((2,), (8,)), "numpy.lib.stride_tricks.sliding_window_view": ((2, 2, 2),),
}


def resolve(name: str):
    target = np
    for part in name.split(".")[1:]:
        target = getattr(target, part)
    return target


def test_the_pack_lists_numpy_views() -> None:
    assert {"numpy.array_split", "numpy.split", "numpy.transpose"} <= set(VIEWS)


@pytest.mark.parametrize("name", VIEWS)
def test_each_numpy_view_shares_its_argument_s_memory(name: str) -> None:
    base = np.arange(48, dtype=np.float32).reshape(4, 6, 2)
    if name == "numpy.frombuffer":
        base = bytearray(64)
    result = resolve(name)(base, *ARGS.get(name, ()))
    parts = result if isinstance(result, (list, tuple)) else [result]
    assert parts and all(np.shares_memory(np.asarray(part), np.asarray(base)) for part in parts)
