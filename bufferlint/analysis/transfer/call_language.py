"""Calls the language defines: Python builtins (``list``, ``getattr``, ``setattr``, ``next``,
``zip``, ``super``, ...) and container methods (``append``, ``setdefault``, ``pop``, ...)."""

from __future__ import annotations

import ast
from dataclasses import replace

from bufferlint.analysis.domain.values import (
    EMPTY,
    Borrow,
    advances_producer,
    Cond,
    Value,
    checked,
    collection,
    container,
    index,
    iterate,
    join,
    join_all,
    view_of,
    waits_when_exhausted,
)
from bufferlint.analysis.frontend.index import dotted_name
from bufferlint.analysis.frontend.syntax import holder_name
from bufferlint.analysis.transfer.call_effects import CallBack, Mark, Materialize, ReadBack, Release, Retain, Settle, Store
from bufferlint.analysis.transfer.call_site import Args, CallSite
from bufferlint.analysis.transfer.keyword_maps import display_keys

# ``typing.cast(T, value)`` returns ``value`` itself: a type checker's word, not a copy.
CASTS = frozenset({"typing.cast", "typing_extensions.cast"})


def builtin(call: CallSite, name: str) -> Value | None:
    """``builtins.<name>(...)``; None when the builtin does nothing to borrowed values."""
    args, vocab, node = call.args, call.vocab, call.node
    first = args.arg(0)
    if name == "super":
        return super_object(call)
    if name in ("getattr", "hasattr") and first is not None:
        attr = args.arg(1)
        if attr is not None and attr.has_const and attr.const in vocab.markers:
            return Value(cond=Cond(clean_if_false=checked(first, vocab.marker_tags(attr.const))))
        if name == "getattr" and attr is not None and attr.has_const and attr.const in vocab.view_attributes:
            return view_of(first, call.step(f"`.{attr.const}` is a view of the borrowed value"))
        default = args.arg(2)
        if name == "getattr" and attr is not None and isinstance(attr.const, str) and default is not None:
            # ``getattr(param, "weight_loader", default_weight_loader)``: called, the
            # attribute the object holds (as its method), or else the default function.
            return Value(method=attr.const, bound=first, ref=default.ref if default.preset is None else None)
        return EMPTY
    if name == "setattr" and len(node.args) >= 3:
        attr, flag = args.arg(1), args.arg(2)
        if attr is not None and attr.has_const and attr.const in vocab.markers:
            if not (flag.has_const and not flag.const):  # type: ignore[union-attr]  # three positional arguments
                call.effects.append(Mark(node.args[0], node, vocab.marker_kind(attr.const)))
        elif call.stores.outlives_step(node.args[0], attribute=True):
            call.effects.append(Retain(node, flag, f"{dotted_name(node.args[0]) or 'object'}.<attr>"))  # type: ignore[arg-type]
        return EMPTY
    if name == "dict" and not node.args and node.keywords:  # ``dict(non_blocking=True)``
        return keyword_dict(call)
    if first is None:
        return collection(None) if name in ("list", "dict", "set") and not node.args else None
    if name in ("list", "tuple", "set", "frozenset", "sorted", "dict"):
        call.effects.append(Materialize(node, first, f"{name}(...)"))
        if waits_when_exhausted(first):  # ``list(pool.map(fn, parts))`` waits for every task
            call.effects.append(Settle(Value(pending=waits_when_exhausted(first))))
    if name in ("max", "min") and len(node.args) == 1 and not isinstance(node.args[0], ast.Starred):
        # ``max(stream, key=...)`` holds the best element seen while it takes the next ones
        call.effects.append(Materialize(node, first, f"{name}(...)", note=(
            f"`{name}(...)` keeps the best element seen while the producer advances to the next ones")))
        return join(iterate(first), args.keyword("default")) or EMPTY
    if name in ("list", "set", "sorted"):
        return collection(iterate(first))
    if name in ("tuple", "frozenset"):
        return container(iterate(first))
    if name in ("reversed", "iter"):
        return container(iterate(first), lazy=advances_producer(first))
    if name == "filter":
        second = args.arg(1)
        return container(iterate(second), lazy=advances_producer(second)) if second is not None else EMPTY
    if name == "map":
        return mapped(call)
    if name == "next":
        default = args.arg(1)
        return join(iterate(first, call.step("element taken by `next()`")), default) or EMPTY
    if name == "enumerate":
        return container(Value(items=(EMPTY, iterate(first))), lazy=advances_producer(first))
    if name == "zip":
        inputs = list(args.flat())
        parts = tuple(iterate(v) for v in inputs)
        return container(container(None, parts), lazy=any(advances_producer(v) for v in inputs))
    if name == "dict":
        return container(index(iterate(first), 1))
    return None


def keyword_dict(call: CallSite) -> Value:
    """``dict(k=v, ...)``: a dict of those values whose keys are known (``Value.keys``), on
    this path; a ``**mapping`` among them leaves them not known."""
    keywords = call.args.keywords
    values = [value if key is not None else index(value, None) for key, value in keywords]
    result = collection(join_all(values))
    st = call.frame.st
    keys = display_keys([None if key is None else ast.Constant(key) for key, _ in keywords], values,
                        st.assume if st is not None else frozenset())
    return replace(result, keys=keys) if keys is not None else result


def mapped(call: CallSite) -> Value | None:
    """``map(fn, *iterables)``: ``fn`` is called with an element of each iterable, as a
    callback is (``CallBack``): what it submits or keeps is reported through this call. The
    calls are evaluated once, here, as if ``map`` ran them all at once (``list(map(...))``);
    a lazy ``map`` whose elements are waited one by one as it is iterated is not told apart.
    What ``fn`` returns is not followed, unless it is a builtin container type
    (``map(tuple, pairs)``): each result then holds the element's values; otherwise the
    result is a lazy iterator of nothing known."""
    positional = call.args.positional
    if len(positional) < 2 or any(starred for _, starred in positional):
        return None
    function = positional[0][0]
    iterables = [value for value, _ in positional[1:]]
    step = call.step("element taken by `map(...)`")
    elements = Args([(iterate(value, step), False) for value in iterables], [], {})
    lazy = any(advances_producer(value) for value in iterables)
    if function.ref in _KEEPING_TYPES and len(iterables) == 1:  # ``map(tuple, f.tensors())``
        return container(container(iterate(elements.positional[0][0])), lazy=lazy)
    note = call.step("`map(...)` calls it with each element")
    call.effects.append(CallBack(call.node, function, elements, note, frozenset()))
    return container(None, lazy=lazy)


# Builtin types whose instance built from an iterable holds its elements (not copies of them).
_KEEPING_TYPES = frozenset({"builtins.tuple", "builtins.list", "builtins.set", "builtins.frozenset", "builtins.sorted"})


def super_object(call: CallSite) -> Value:
    """``super()`` in a method: the same object, dispatched from the class's bases."""
    info = call.frame.info
    project = call.program.index
    cls = project.classes.get(info.class_qualname or "")
    st = call.frame.st
    if cls is None or not info.params or st is None:
        return EMPTY
    receiver = st.vars.get(info.params[0], EMPTY)
    bases = frozenset(project.canonical(base) for base in cls.bases)
    return Value(leaves=receiver.leaves, types=bases)


# ``stack.enter_context(cm)`` enters ``cm`` as a ``with`` statement would, and returns what
# its ``__enter__`` returns (CPython 3.11-3.14 contextlib); the exit comes with the stack's.
EXIT_STACKS = frozenset({"contextlib.ExitStack", "contextlib.AsyncExitStack"})
ENTER_METHODS = frozenset({"enter_context", "enter_async_context"})


def entered_context(call: CallSite) -> Value | None:
    """``stack.enter_context(open_reader(path))`` of an ``ExitStack``: the object entered, as
    ``with ... as x`` binds a library object (its ``__enter__`` returning ``self``, as readers
    and executors do), so what built it still decides what its methods hand out. None for
    any other call."""
    receiver = call.receiver
    if call.method not in ENTER_METHODS or receiver is None or not (receiver.types & EXIT_STACKS):
        return None
    return call.args.arg(0, "cm") or EMPTY


def container_method(call: CallSite) -> Value | None:
    """``c.append(v)``, ``c.setdefault(k, v)``, ``c.pop(k)``...: what a container method of
    a receiver that is no borrowed value does; None for any other method."""
    receiver, method, node = call.receiver, call.method, call.node
    if receiver is None or any(isinstance(leaf, Borrow) for leaf in receiver.leaves):
        return None
    args = call.args
    if not isinstance(node.func, ast.Attribute):
        return None  # a bound method called through an alias: no container syntax to follow
    target = node.func.value
    effects = call.effects
    if method in ("append", "add", "appendleft") and args.positional:
        effects.append(Store(target, args.positional[-1][0], node))
        return EMPTY
    if method == "insert" and len(args.positional) >= 2:
        effects.append(Store(target, args.positional[1][0], node))
        return EMPTY
    if method in ("extend", "update") and (args.positional or args.keywords):
        for value in args.flat():
            effects.append(Store(target, index(value, None), node))
        return EMPTY
    if method == "setdefault":
        default = args.arg(1)
        if default is not None:
            effects.append(Store(target, default, node))
        inner = join(index(receiver, None), default) or EMPTY
        return replace(inner, part_of=holder_name(target))  # the inner container lives in the outer
    holder = holder_name(target)
    if method == "clear":
        if holder:
            effects.append(Release(holder, None))
        return EMPTY
    if method == "pop" and node.args and holder:
        effects.append(Release(holder, ast.unparse(node.args[0])))
    if method in ("get", "pop", "popitem", "popleft", "values", "items"):
        effects.append(ReadBack(target, node))
    if method == "popitem":  # a (key, value) pair
        return Value(items=(EMPTY, index(receiver, None)))
    if method in ("get", "pop", "popleft"):
        return join(index(receiver, None), args.arg(1)) or EMPTY
    # A dict's views are not producers: iterating them reuses no buffer.
    if method == "values":
        return container(index(receiver, None))
    if method == "items":
        return container(Value(items=(EMPTY, index(receiver, None))))
    if method == "keys":
        return EMPTY
    if method == "copy" and (receiver.elems is not None or receiver.items is not None):
        return receiver
    return None
