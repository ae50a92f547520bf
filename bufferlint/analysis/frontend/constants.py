"""Constants the rule packs' argument conditions compare, wherever they are written.

A pack condition such as ``.to(device@0='cpu*', non_blocking=True)`` is about the value a call
passes, not its spelling: ``torch.device("cpu")``, a module constant holding one
(``CPU = torch.device("cpu")``, imported or not) and a parameter's default are the same
``"cpu"``. This module folds the expressions whose value is known without running anything:
literals, names the caller resolves to constants, and the device constructors (a device is
its string, ``"cuda:0"``, which is what the conditions match). The index folds module
constants with it before any vocabulary is at hand (and the cache compares those constants
as part of a file's interface), so the constructors are a table here, not a pack key.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class DeviceObject:
    """A ``torch.device`` held in a folded tuple (``_CPU_DEVICES = ("cpu",
    torch.device("cpu"))``), kept apart from the string it is equal to nowhere else: torch
    says ``torch.device("cpu") == "cpu"`` is False, so whether ``device in _CPU_DEVICES``
    depends on which of the two the tuple holds (``conditions.membership``)."""

    device: str


# Calls whose value is a device, by qualified name: ``torch.device("cuda", 0)`` is "cuda:0".
DEVICE_CONSTRUCTORS = frozenset({"torch.device"})

# A name's constant value, when it has one: ``(True, value)``, else ``(False, None)``.
Resolve = Callable[[ast.expr], "tuple[bool, object]"]


def device_value(kind: object, index: object = None) -> str | None:
    """The device ``torch.device(kind, index)`` makes, as its string; None when the
    arguments are not a device's (``torch.device(1)`` is an accelerator by index)."""
    if not isinstance(kind, str):
        return None
    if index is None:
        return kind
    if isinstance(index, int) and not isinstance(index, bool) and ":" not in kind:
        return f"{kind}:{index}"
    return None


def fold_device(positional: list[tuple[bool, object]], keywords: dict[str, tuple[bool, object]]) -> str | None:
    """A device constructor's value from its arguments (each ``(known, value)``): the
    device type first or as ``type=``, the index second or as ``index=``."""
    kind = positional[0] if positional else keywords.get("type", (False, None))
    index = positional[1] if len(positional) > 1 else keywords.get("index", (True, None))
    if len(positional) > 2 or set(keywords) - {"type", "index"} or not (kind[0] and index[0]):
        return None
    return device_value(kind[1], index[1])


def static_constant(node: ast.expr, resolve: Resolve, callee: Callable[[ast.expr], str | None]) -> tuple[bool, object]:
    """The value of ``node`` if it is known statically: a literal, a name ``resolve`` knows,
    or a device constructor (``callee`` names what a call calls) of such arguments."""
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, (ast.Name, ast.Attribute)):
        return resolve(node)
    if isinstance(node, ast.Call) and callee(node.func) in DEVICE_CONSTRUCTORS:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return False, None
        positional = [static_constant(a, resolve, callee) for a in node.args]
        keywords = {k.arg: static_constant(k.value, resolve, callee) for k in node.keywords if k.arg is not None}
        device = fold_device(positional, keywords)
        return (True, device) if device is not None else (False, None)
    return False, None
