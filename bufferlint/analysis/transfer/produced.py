"""What a pack source hands out, and a source's method called on a parameter.

A producer whose lending its construction decides (``owned-if``'s ``built-by``:
``safe_open(..., copy=False)``) is often built in one function and read in another that takes
it as a parameter (``def named_tensors(reader): for name, t in reader.tensors(): yield ...``).
That function cannot tell what it hands out: its result names the part ``reader.tensors()``
of its parameter (``values.Produced``), and each call site asks its vocabulary what the
method gives for the object it passes (``produced``), as if the call were written there.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.values import EMPTY, Borrow, ParamRef, Produced, Value, container
from bufferlint.analysis.frontend.vocabmatch import CallShape, by_construction
from bufferlint.analysis.transfer.call_site import CallSite
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.packs import OwnedIf, Shape, SourceSpec


def borrowed_from(frame: Frame, node: ast.AST, spec: SourceSpec, what: str, kind: str | None = None) -> Value:
    """What source ``spec`` hands out at ``node`` (a call, or an attribute read ``what``):
    values of its kind, or of ``kind`` when the caller found the kind it names none."""
    kind = spec.kind if kind is None else kind
    site = (frame.info.qualname, node.lineno, node.col_offset)  # type: ignore[attr-defined]
    condition = f" {spec.condition}" if spec.condition else ""
    step = frame.step(node, f"`{what}` hands out borrowed views of a reused buffer{condition}")
    # for words and fixes; a version-conditioned source adds when it lends and the floor
    version = (spec.condition, spec.admitted, spec.floor) if spec.condition else ()
    step = replace(step, fact=("source", kind, str(spec.produces), *version))
    if spec.advances:
        frame.call_advanced.add(site)
    return _shape_value(spec.produces, Borrow(site, False, (step,), kind=kind))


def _shape_value(shape: Shape, leaf: Borrow) -> Value:
    if shape.kind == "borrowed":
        return Value(leaves=frozenset({leaf}))
    if shape.kind == "owned":
        return EMPTY
    if shape.kind == "tuple":
        return container(None, tuple(_shape_value(s, leaf) for s in shape.items))
    inner = _shape_value(shape.items[-1], leaf)
    return container(inner, lazy=shape.kind == "iter")


def built_owned(receiver: Value | None, cond: OwnedIf) -> bool:
    """Was the receiver built by ``cond.built_by`` with what makes it owned, on every path it
    may come from? A receiver whose construction is not seen lends."""
    said = [owned for built, owned in receiver.built if built == cond] if receiver is not None else []
    return bool(said) and all(owned is True for owned in said)


def parameter_produces(call: CallSite) -> Value | None:
    """``reader.tensors()`` with ``reader`` (a part of) a parameter whose class is not known,
    ``tensors`` the method of a producer its construction decides about: the part of the
    parameter it hands out (``values.Produced``), for each caller to resolve. None otherwise."""
    receiver, method = call.receiver, call.method
    if receiver is None or method is None or receiver.types or receiver.declared \
            or method not in call.vocab.built_methods:
        return None
    params = [leaf for leaf in receiver.leaves if isinstance(leaf, ParamRef)]
    if not params:
        return None
    step = call.step(f"`{call.name}(...)` hands out what the object the caller passes hands out")
    return Value(leaves=frozenset(leaf.extend(Produced(method), step) for leaf in params))


def produced(call: CallSite, receiver: Value, method: str) -> Value:
    """What ``method`` of ``receiver`` (an object this call passes) hands out: the first
    source of that method on the receiver's classes that lends for it (one judged by what
    built the receiver), borrowed at this call. Nothing when every such source is owned
    (``safe_open(..., copy=True)``) or the receiver is of no class a source names."""
    types = receiver.types | receiver.declared
    if not types:
        return EMPTY
    shape = CallShape(None, method, types, _no_arguments)
    for spec in call.vocab.matches("sources", shape):
        if not by_construction(spec) or any(built_owned(receiver, cond) for cond in spec.owned_if):
            continue
        return borrowed_from(call.frame, call.node, spec, f"{call.name}(...)` calling `.{method}()", spec.kind)
    return EMPTY


def _no_arguments(name: str, position: int | None = None) -> tuple[str, object]:
    return "absent", None
