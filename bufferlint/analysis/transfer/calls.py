"""What a call does to borrowed values.

Resolution order: Python builtins and container methods (the language); the project's own
definitions through their summaries (the analysed tree decides for itself); the rule packs'
vocabulary (sources, sanitizers, views, guards, sinks, settlers, pass-through wrappers);
for methods on receivers of unknown type, every project method of that name; otherwise an
unknown external call, which neither creates nor kills borrowed state.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING

from bufferlint.analysis.transfer.call_effects import (
    Adopt,
    KeepInField,
    Advance,
    Drain,
    HostRead,
    Issue,
    Materialize,
    Mark,
    Reach,
    ReadBack,
    Record,
    Release,
    Report,
    Retain,
    Settle,
    Store,
    Submit,
    Synchronize,
    UseAfterRefill,
)
from bufferlint.analysis.frontend.index import FunctionInfo, dotted_name
from bufferlint.analysis.frontend.syntax import holder_name
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY, Summary
from bufferlint.analysis.domain.values import (
    EMPTY,
    Borrow,
    Cond,
    ParamRef,
    evolve,
    has_leaves,
    Value,
    checked,
    clean,
    clear_leaf,
    collection,
    container,
    deep_leaves,
    deep_pending,
    in_flight,
    index,
    iterate,
    join,
    join_all,
    map_leaves,
    resolve,
    view_of,
)
from bufferlint.analysis.frontend.vocabmatch import CallShape
from bufferlint.findings import TraceStep
from bufferlint.packs import Shape, SinkSpec, SourceSpec

if TYPE_CHECKING:
    from bufferlint.analysis.transfer.interpreter import FunctionInterpreter

NOT_BY_NAME = {"__init__", "__call__", "__enter__", "__exit__", "get", "pop", "append", "items", "update", "copy"}


class Args:
    """A call's evaluated arguments."""

    def __init__(self, it: "FunctionInterpreter", node: ast.Call) -> None:
        self.positional: list[tuple[Value, bool]] = []
        self.keywords: list[tuple[str | None, Value]] = []
        # What each argument expression (and its parts) evaluated to: which one carries a
        # borrowed value, for the finding's subject.
        outer = it.recorded
        it.recorded = self.values = outer if outer is not None else {}
        try:
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    self.positional.append((it.eval(arg.value), True))
                else:
                    self.positional.append((it.eval(arg), False))
            for kw in node.keywords:
                self.keywords.append((kw.arg, it.eval(kw.value)))
        finally:
            it.recorded = outer

    def first(self, name: str | None) -> Value | None:
        """The value a function-style view or wrapper acts on: its first argument, passed by
        position or by ``name`` (the pack's signature: ``torch.narrow(input=w, ...)``,
        ``nn.Parameter(data=w)``)."""
        if self.positional:
            value, starred = self.positional[0]
            return index(value, None) if starred else value
        return self.keyword(name) if name is not None else None

    def keyword(self, name: str) -> Value | None:
        for key, value in self.keywords:
            if key == name:
                return value
        return None

    def constant_kwarg(self, name: str) -> tuple[bool, object]:
        value = self.keyword(name)
        if value is not None and value.has_const:
            return True, value.const
        return False, None

    def argument(self, name: str, position: int | None = None) -> tuple[str, object]:
        """How the call passes a parameter: ("absent", None), ("const", value) for a literal
        or a static name (``concurrent.futures.ALL_COMPLETED``), or ("unknown", None)."""
        value = self.keyword(name)
        if value is None and position is not None:
            value = self.arg(position)
        if value is None:
            unpacked = any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords)
            return ("unknown", None) if unpacked else ("absent", None)
        if value.has_const:
            return "const", value.const
        if value.ref is not None and not value.leaves:
            return "const", value.ref
        return "unknown", None

    def arg(self, position: int, name: str | None = None) -> Value | None:
        if name is not None:
            value = self.keyword(name)
            if value is not None:
                return value
        if position < len(self.positional) and not any(s for _, s in self.positional[: position + 1]):
            return self.positional[position][0]
        return None

    def flat(self, skip: Value | None = None) -> list[Value]:
        """Every argument value as the callee will see it (starred and ** unpacked)."""
        out = []
        for value, starred in self.positional:
            if value is not skip:
                out.append(index(value, None) if starred else value)
        for key, value in self.keywords:
            if value is not skip:
                out.append(index(value, None) if key is None else value)
        return out

    def fit(self, info: FunctionInfo) -> bool:
        starred = any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords)
        keywords = {k for k, _ in self.keywords if k is not None}
        return info.accepts(None if starred else len(self.positional), keywords, bound_receiver=True)

    def fit_plain(self, info: FunctionInfo) -> bool:
        """Could this call bind to a function called without a receiver?"""
        starred = any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords)
        keywords = {k for k, _ in self.keywords if k is not None}
        return info.accepts(None if starred else len(self.positional), keywords, bound_receiver=False)

    def origins(self, receiver: Value | None) -> tuple[bool, frozenset]:
        """Whether the arguments carry a concrete borrowed value, and which of the caller's
        parameters they derive from: the facts that decide whether the callee matters."""
        values = self.flat() + ([receiver] if receiver is not None else [])
        return _origins(values)


def _origins(values) -> tuple[bool, frozenset]:
    """(holds a producer's borrowed object, the parameters it may come from). Device copies
    in flight are no producer's: they reach callees through ``Program.flight_hot`` alone."""
    concrete, params = False, set()
    for value in values:
        for leaf in deep_leaves(value, through_lazy=True):
            if isinstance(leaf, Borrow):
                concrete = concrete or not leaf.flight
            else:
                params.add(leaf.index)
    return concrete, frozenset(params)


def evaluate_call(it: "FunctionInterpreter", node: ast.Call) -> Value:
    func = node.func
    receiver: Value | None = None
    qualname: str | None = None
    method: str | None = None
    fallback: str | None = None
    if isinstance(func, ast.Attribute):
        receiver = it.eval(func.value)
        if receiver.ref is not None and not receiver.leaves:
            qualname = it.program.index.canonical(f"{receiver.ref}.{func.attr}")
            receiver = None
        else:
            method = func.attr
    elif _attribute_lookup(it, func):
        # ``getattr(param, "weight_loader", default_weight_loader)(param, w)``: the attribute
        # as a method of the object, or the default.
        receiver, method = it.eval(func.args[0]), func.args[1].value
        fallback = it.eval(func.args[2]).ref
    else:
        callee = it.eval(func)
        qualname = callee.ref
        if qualname is None and callee.method is not None and callee.bound is not None:
            receiver, method = callee.bound, callee.method  # ``submit = executor.submit; submit(...)``
    if it.st is None:
        return EMPTY
    args = Args(it, node)
    if it.st is None:
        return EMPTY
    name = dotted_name(func) or (method or "call")
    call = Call(it, node, qualname, method, receiver, args, name)
    call.fallback = fallback
    value = call.evaluate()
    for effect in call.effects:
        it.apply(effect)
    return value


class Call:
    def __init__(self, it, node, qualname, method, receiver, args, name) -> None:
        self.it = it
        self.node = node
        self.qualname = qualname
        self.method = method
        self.receiver = receiver
        self.args = args
        self.name = name
        self.program = it.program
        self.constructed: str | None = None
        self.fallback: str | None = None  # a ``getattr`` default, called when the attribute is missing
        self.effects: list = []  # what the call does besides its value (``call_effects``)
        vocab_name = qualname[len("builtins."):] if qualname and qualname.startswith("builtins.") else qualname
        known = (receiver.types | receiver.declared) if receiver is not None else frozenset()
        classes = self.program.index.classes
        if any(name in classes for name in known):
            # A project subclass of a pack class is still one (``class MyPool(ThreadPoolExecutor)``).
            known = frozenset(a for t in known for a in self.program.index.class_ancestors(t))
        self.shape = CallShape(vocab_name, method, known, args.argument)

    def step(self, note: str) -> TraceStep:
        return self.it.step(self.node, note)

    # Made once per call, whatever number of project functions it may reach.
    @cached_property
    def call_step(self) -> TraceStep:
        return self.step(f"passed to `{self.name}(...)`")

    @cached_property
    def returned_step(self) -> TraceStep:
        return self.step(f"returned by `{self.name}(...)`")

    @cached_property
    def assume(self) -> frozenset:
        return frozenset(self.it.st.assume)

    # -- dispatch ------------------------------------------------------------------------

    def evaluate(self) -> Value:
        vocab = self.it.vocab
        read = vocab.match("host-reads", self.shape)
        if read is not None:
            self.read_host(read)
        if self.it.st.refilled:
            used = join_all([self.receiver, *self.args.flat()])
            self.effects.append(UseAfterRefill(self.node, used, self.name))
        if vocab.match("advances", self.shape) is not None:
            self.effects.append(Advance(self.node, self.name))
        if self.receiver is not None and (self.receiver.pending or self.receiver.alloc):
            result = self.wait_on_receiver()
            if result is not None:
                return result
        if self.qualname is not None:
            if self.qualname.startswith("builtins."):
                result = self.builtin(self.qualname[len("builtins."):])
                if result is not None:
                    return result
            result = self.users_word()
            if result is not None:
                return result
            targets = self.project_targets_static()
            if targets:
                return self.apply_project(targets)
            result = self.vocabulary()
            if result is not None:
                return result
            self.demand("qualname", self.qualname, None)
            return Value(types=frozenset({self.qualname}), alloc=frozenset({self.allocation_site()}))
        result = self.users_word()
        if result is not None:
            return result
        targets = self.project_targets_typed()  # a project class's own `update` is not dict.update
        if targets:
            return self.apply_project(targets)
        result = self.container_method()
        if result is not None:
            return result
        result = self.vocabulary()
        if result is not None:
            return result
        if not self.known_external_receiver() and self.method not in NOT_BY_NAME and not self.receiver_is_borrowed():
            targets = [info for info in self.program.methods_named(self.method) if self.args.fit(info)]
            # Functions the project attaches as this attribute (``weight_loader``), and a
            # ``getattr`` default; called without a receiver.
            attached = self.program.index.attached_functions(self.method)
            if self.fallback in self.program.index.functions:
                attached.append(self.program.index.functions[self.fallback])
            self.demand("method", self.method, self.receiver)
            if targets or attached:
                return self.apply_project(targets + [a for a in attached if self.args.fit_plain(a)], by_name=True)
        return EMPTY

    def allocation_site(self) -> tuple:
        return (self.it.info.qualname, self.node.lineno, self.node.col_offset)

    def wait_on_receiver(self) -> Value | None:
        """``future.result()``, ``thread.join()``: a method that waits for its receiver's work;
        ``executor.shutdown(wait=True)``: one that waits for every task of the executor."""
        vocab = self.it.vocab
        if self.receiver.pending and vocab.match("settlers", self.shape) is not None:
            self.effects.append(Settle(Value(pending=self.receiver.pending)))
            return EMPTY
        if self.receiver.alloc and vocab.match("drains", self.shape) is not None:
            self.effects.append(Drain(self.receiver))
            return EMPTY
        return None

    def demand(self, kind: str, name: str, receiver: Value | None) -> None:
        """Ask for the files defining ``name`` if what we pass it may be borrowed."""
        concrete, params = self.args.origins(receiver)
        if self.program.is_hot(self.it.info.qualname, concrete, params):
            self.effects.append(Record("demand", (kind, name)))

    def receiver_is_borrowed(self) -> bool:
        """A method of a (maybe) borrowed value is the tensor's own, not a project method."""
        concrete, params = _origins([self.receiver])
        return self.program.is_hot(self.it.info.qualname, concrete, params)

    def known_external_receiver(self) -> bool:
        """A receiver of a library class (not the project's): its methods are the library's.
        A project class whose file is not parsed yet is asked for, and dispatched by name
        until then."""
        types = self.receiver.types if self.receiver is not None else frozenset()
        external = False
        for type_name in types:
            if type_name in self.program.index.classes:
                continue
            if self.program.in_project(type_name):
                self.demand("qualname", type_name, self.receiver)
            else:
                external = True
        return external

    # -- the language --------------------------------------------------------------------

    def builtin(self, name: str) -> Value | None:
        args = self.args
        first = args.arg(0)
        if name == "super":
            return self.super_object()
        if name in ("getattr", "hasattr") and first is not None:
            attr = args.arg(1)
            if attr is not None and attr.has_const and attr.const in self.it.vocab.markers:
                return Value(cond=Cond(clean_if_false=checked(first, self.it.vocab.marker_tags(attr.const))))
            if name == "getattr" and attr is not None and attr.has_const and attr.const in self.it.vocab.view_attributes:
                return view_of(first, self.step(f"`.{attr.const}` is a view of the borrowed value"))
            return EMPTY
        if name == "setattr" and len(self.node.args) >= 3:
            attr, flag = args.arg(1), args.arg(2)
            if attr is not None and attr.has_const and attr.const in self.it.vocab.markers:
                if not (flag.has_const and not flag.const):
                    self.effects.append(Mark(self.node.args[0], self.node, self.it.vocab.marker_kind(attr.const)))
            elif self.it.outlives_step(self.node.args[0], attribute=True):
                self.effects.append(Retain(self.node, flag, f"{dotted_name(self.node.args[0]) or 'object'}.<attr>"))
            return EMPTY
        if first is None:
            return collection(None) if name in ("list", "dict", "set") and not self.node.args else None
        if name in ("list", "tuple", "set", "frozenset", "sorted", "dict"):
            self.effects.append(Materialize(self.node, first, f"{name}(...)"))
        if name in ("list", "set", "sorted"):
            return collection(iterate(first))
        if name in ("tuple", "frozenset"):
            return container(iterate(first))
        if name in ("reversed", "iter"):
            return container(iterate(first), lazy=True)
        if name == "filter":
            second = args.arg(1)
            return container(iterate(second), lazy=True) if second is not None else EMPTY
        if name == "next":
            default = args.arg(1)
            return join(iterate(first, self.step("element taken by `next()`")), default) or EMPTY
        if name == "enumerate":
            return container(Value(items=(EMPTY, iterate(first))), lazy=True)
        if name == "zip":
            parts = tuple(iterate(v) for v in args.flat())
            return container(container(None, parts), lazy=True)
        if name == "dict":
            return container(index(iterate(first), 1))
        return None

    def super_object(self) -> Value:
        """``super()`` in a method: the same object, dispatched from the class's bases."""
        info = self.it.info
        index = self.program.index
        cls = index.classes.get(info.class_qualname or "")
        if cls is None or not info.params or self.it.st is None:
            return EMPTY
        receiver = self.it.st.vars.get(info.params[0], EMPTY)
        bases = frozenset(index.canonical(base) for base in cls.bases)
        return Value(leaves=receiver.leaves, types=bases)

    def container_method(self) -> Value | None:
        receiver, method = self.receiver, self.method
        if receiver is None or any(isinstance(leaf, Borrow) for leaf in receiver.leaves):
            return None
        args = self.args
        if not isinstance(self.node.func, ast.Attribute):
            return None  # a bound method called through an alias: no container syntax to follow
        target = self.node.func.value
        if method in ("append", "add", "appendleft") and args.positional:
            self.effects.append(Store(target, args.positional[-1][0], self.node))
            return EMPTY
        if method == "insert" and len(args.positional) >= 2:
            self.effects.append(Store(target, args.positional[1][0], self.node))
            return EMPTY
        if method in ("extend", "update") and (args.positional or args.keywords):
            for value in args.flat():
                self.effects.append(Store(target, index(value, None), self.node))
            return EMPTY
        if method == "setdefault":
            default = args.arg(1)
            if default is not None:
                self.effects.append(Store(target, default, self.node))
            inner = join(index(receiver, None), default) or EMPTY
            return replace(inner, part_of=holder_name(target))  # the inner container lives in the outer
        if method == "clear":
            if holder_name(target):
                self.effects.append(Release(holder_name(target), None))
            return EMPTY
        if method == "pop" and self.node.args and holder_name(target):
            self.effects.append(Release(holder_name(target), ast.unparse(self.node.args[0])))
        if method in ("get", "pop", "popitem", "popleft", "values", "items"):
            self.effects.append(ReadBack(target, self.node))
        if method in ("get", "pop", "popitem", "popleft"):
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

    # -- the vocabulary ------------------------------------------------------------------

    def vocabulary(self, skip: str = "") -> Value | None:
        """The first pack entry the call matches decides what it does (``HANDLERS``)."""
        vocab = self.it.vocab
        if not vocab.names(self.shape):
            return None
        for kind, handler in HANDLERS:
            if kind == skip:
                continue
            spec = vocab.match(kind, self.shape, self.it.contexts if kind == "sinks" else frozenset())
            if spec is not None:
                return handler(self, spec)
        return None

    def users_word(self) -> Value | None:
        """A source or sink the project itself declared applies even where the tree defines
        that function (only the shipped packs yield to the tree's own code). A declared guard
        is different: its own code is checked (BL002) and decides what it protects."""
        vocab = self.it.vocab
        if not vocab.names(self.shape):
            return None
        for kind, handler in HANDLERS:
            if kind in ("sources", "sinks"):
                spec = vocab.match(kind, self.shape, self.it.contexts if kind == "sinks" else frozenset())
                if spec is not None and vocab.is_users(spec):
                    return handler(self, spec)
        return None

    def read_host(self, pattern) -> None:
        """``t.tolist()``, ``int(t)``: the host reads the receiver (or the first argument) now."""
        if pattern.method is not None or (self.receiver is not None and pattern.qualname is None):
            subject = self.receiver
        else:
            subject = self.args.arg(0)
        if subject is not None and subject.leaves:
            self.effects.append(HostRead(self.node, subject, self.name))

    def on_synchronizer(self, spec) -> Value:
        self.effects.append(Synchronize())
        return EMPTY

    def on_settler(self, pattern) -> Value:
        """A method waits for its receiver (``future.result()``); a function for the futures
        it is given, in collections too (``wait(futures)``)."""
        if pattern.method is not None or self.receiver is not None:
            if self.receiver is not None and self.receiver.pending:
                self.effects.append(Settle(Value(pending=self.receiver.pending)))
            return EMPTY
        for value in self.args.flat():
            self.effects.append(Settle(value))
        return EMPTY

    def on_drain(self, spec) -> Value:
        if self.receiver is not None:
            self.effects.append(Drain(self.receiver))
        return EMPTY

    def on_sanitizer(self, spec) -> Value:
        """An owned copy; a sanitizer of one kind copies only values of that kind (or of no
        known kind): another kind's borrowed values come out as views, still borrowed."""
        subject = self.acted_on(spec.calls[0]) if spec.kind else None
        if subject is None:
            return EMPTY
        kinds = frozenset({spec.kind})
        others = Value(leaves=frozenset(filter(None, (clear_leaf(leaf, kinds) for leaf in subject.leaves))))
        if not others.leaves:
            return EMPTY
        return view_of(others, self.step(f"`{self.name}(...)` copies only `{spec.kind}` values: this one stays a view"))

    def on_guard(self, guard) -> Value:
        """A guard's True proves its argument clean for the guard's kind (every kind, when
        the guard names none)."""
        subject = self.args.arg(guard.param)
        return Value(cond=Cond(clean_if_true=checked(subject, (guard.kind or None,)) if subject is not None else frozenset()))

    def acted_on(self, pattern) -> Value | None:
        """The value a method-style (its receiver) or function-style (its first argument)
        view or copy acts on."""
        return self.receiver if self.receiver is not None else self.args.first(self.it.vocab.first_param(pattern))

    def on_view(self, spec) -> Value:
        subject = self.acted_on(spec)
        if subject is None:
            return EMPTY
        return view_of(subject, self.step(f"`{self.name}(...)` returns a view sharing the buffer"))

    def on_retainer(self, spec) -> Value:
        holder = self.node.func.value if isinstance(self.node.func, ast.Attribute) else None
        if holder is not None and self.it.outlives_step(holder, attribute=True):
            self.effects.append(Retain(self.node, join_all(self.args.flat()), f"{dotted_name(holder) or 'object'}.{self.method}"))
        return EMPTY

    def on_bind(self, spec) -> Value:
        return container(join_all(self.args.flat()))

    def on_passthrough(self, spec) -> Value:
        first = self.args.arg(0)
        return container(iterate(first), lazy=True) if first is not None else EMPTY

    def source(self, spec: SourceSpec) -> Value:
        for cond in spec.owned_if:
            if cond.receiver_call is None:
                how, value = self.args.argument(cond.kwarg)
                if (how == "const" and value == cond.equals) or (how == "absent" and cond.default):
                    return EMPTY
            elif self.receiver_called_with(cond.receiver_call, cond.kwarg, cond.equals, cond.default):
                return EMPTY
        if spec.until:
            return self.in_flight_copy(spec)
        value = borrowed_from(self.it, self.node, spec, f"{self.name}(...)")
        self.effects.append(Issue(value))
        return value

    def in_flight_copy(self, spec: SourceSpec) -> Value:
        """A non-blocking device-to-host copy: a host tensor whose bytes arrive later. The
        call still does what the rest of the vocabulary says (``.to`` may be a view of a host
        receiver, a host-to-device copy of a borrowed one): the copy is added to that."""
        step = self.step(f"`{self.name}(...)` copies to the host asynchronously: in flight until the device is synchronised")
        step = replace(step, fact=("source", spec.kind, "borrowed"))
        site = (self.it.info.qualname, self.node.lineno, self.node.col_offset)
        copy = Value(leaves=frozenset({Borrow(site, False, (step,), flight=True, kind=spec.kind)}))
        self.effects.append(Issue(copy))
        return join(self.vocabulary(skip="sources") or EMPTY, copy)

    def receiver_called_with(self, method: str, kwarg: str, expected: object, default: bool = False) -> bool:
        """Did this function call ``<same receiver>.method(..., kwarg=expected)``? With
        ``default`` (the parameter defaults to ``expected``): did no such call pass another
        value, or one not known (``**options``)?"""
        receiver_name = dotted_name(self.node.func.value) if isinstance(self.node.func, ast.Attribute) else None
        if receiver_name is None:
            return default
        otherwise = False
        for child in ast.walk(self.it.info.node):
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == method
                and dotted_name(child.func.value) == receiver_name
            ):
                for kw in child.keywords:
                    if kw.arg == kwarg and isinstance(kw.value, ast.Constant) and kw.value.value == expected:
                        return True
                    if kw.arg in (kwarg, None):
                        otherwise = True
        return default and not otherwise

    def sink(self, spec: SinkSpec) -> Value:
        assume: frozenset = frozenset()
        cleaned: frozenset = frozenset()
        enabler = None
        if spec.enabled_by:
            position = spec.params.index(spec.enabled_by) if spec.enabled_by in spec.params else -1
            enabler = self.args.arg(position, spec.enabled_by) if position >= 0 else self.args.keyword(spec.enabled_by)
            if enabler is not None:
                if enabler.has_const and not enabler.const:
                    return EMPTY
                assume, cleaned = self.enabling_condition(enabler)
        if spec.payload == "receiver":
            payload = self.receiver or EMPTY
        else:
            payload = join_all(self.args.flat(skip=enabler))
            if spec.payload == "all" and self.receiver is not None and spec.rule != "BL001":
                payload = join(payload, self.receiver)
        self.note_guard_use(enabler, payload)
        payload = clean(payload, cleaned)
        if spec.eager:
            note = f"every element is submitted to `{self.name}` up front while the producer advances"
            for value in self.args.flat(skip=enabler):
                self.effects.append(Materialize(self.node, value, self.name, spec.rule, note))
        subject = self.subject(frozenset(deep_leaves(payload)))
        owners = self.receiver.alloc if self.receiver is not None else frozenset()
        if next(deep_leaves(payload), None) is None:
            return EMPTY
        self.effects.append(Submit(self.node, payload, self.name, assume, subject, spec.rule, owners))
        return Value(pending=frozenset({(self.node.lineno, self.node.col_offset)}))  # the future

    def subject(self, leaves: frozenset) -> str:
        """The source of the argument that carries these borrowed leaves (descending into a
        tuple or list literal), so a fix can name the value to guard."""
        tiers = (
            {leaf for leaf in leaves if isinstance(leaf, Borrow)},
            {leaf for leaf in leaves if isinstance(leaf, ParamRef) and "iter" in leaf.path},
            set(leaves),
        )
        base_ids = {leaf.base for leaf in next((tier for tier in tiers if tier), set())}

        def carries(expr: ast.expr) -> bool:
            value = self.args.values.get(id(expr))
            return value is not None and any(leaf.base in base_ids for leaf in deep_leaves(value))

        candidates = [a.value if isinstance(a, ast.Starred) else a for a in self.node.args]
        candidates += [kw.value for kw in self.node.keywords]
        for expr in candidates:
            if isinstance(expr, (ast.Tuple, ast.List)):
                inner = [e for e in expr.elts if not isinstance(e, ast.Starred) and carries(e)]
                if inner:
                    return ast.unparse(inner[0])
            if carries(expr):
                return ast.unparse(expr)
        return ""

    def note_guard_use(self, enabler: Value | None, payload: Value) -> None:
        """A project predicate deciding whether values are consumed async is used as a guard."""
        if enabler is not None and enabler.origin is not None and next(deep_leaves(payload), None) is not None:
            self.effects.append(Record("guard-use", enabler.origin))

    def enabling_condition(self, enabler: Value) -> tuple[frozenset, frozenset]:
        return enabling_condition(enabler)

    # -- the project ---------------------------------------------------------------------

    def project_targets_static(self) -> list[FunctionInfo]:
        index = self.program.index
        qualname = self.qualname
        if qualname in index.functions:
            return self.through_decorators(index.functions[qualname])
        if qualname in index.classes:
            init = index.class_method(qualname, "__init__")
            self.constructed = qualname
            return [index.functions[init]] if init in index.functions else []
        return []

    def through_decorators(self, info: FunctionInfo) -> list[FunctionInfo]:
        """Calling a function a project decorator wrapped calls the wrapper the decorator
        returned (``@in_background`` submits it), and the function itself only when the
        wrapper hands it its own arguments unchanged (``functools.wraps`` style)."""
        index = self.program.index
        targets = [info]
        for decorator in getattr(info.node, "decorator_list", ()):
            name = index._base_name(info.module, decorator) if isinstance(decorator, (ast.Name, ast.Attribute)) else None
            outer = index.functions.get(index.canonical(name)) if name else None
            if outer is None or outer.kind != "function":
                continue
            self.program.activate(outer.qualname)
            self.effects.append(Record("callee", outer.qualname))  # re-run here when it is summarised
            wrapper = index.functions.get(self.program.summary(outer.qualname).returns.ref or "")
            if wrapper is None:
                continue
            passes = _calls_with_own_arguments(wrapper, outer.params[0] if outer.params else None)
            targets = [wrapper] + (targets if passes else [])
        return targets

    def project_targets_typed(self) -> list[FunctionInfo]:
        index = self.program.index
        found = []
        for type_name in self.shape.receiver_types:
            if type_name in index.classes:
                qualname = index.class_method(type_name, self.method)
                if qualname in index.functions:
                    found.append(index.functions[qualname])
        return found

    def apply_project(self, targets: list[FunctionInfo], by_name: bool = False) -> Value:
        """Apply the targets' summaries. A call resolved only by method name may reach any
        same-named method, so it carries their sinks and the borrowed values they produce,
        but not their parameter pass-through (which would join unrelated classes' results).

        A by-name call can reach hundreds of methods (``model.load_weights(...)``), most of
        them never analysed (an empty summary): for those only the call edge and the flow of
        the arguments are recorded, and what each argument carries is worked out once."""
        results = []
        settles: frozenset | None = None
        bounds: list[dict[int, Value]] = []
        facts: dict[int, tuple[Value, bool, frozenset, bool, bool]] = {}  # id(argument) -> what it carries
        bindings: dict[tuple, dict[int, Value]] = {}  # same signature, same binding (never changed after)
        caller = self.it.info.qualname
        for info in targets:
            self.effects.append(Record("callee", info.qualname))
            self.program.consider(info)
            summary = self.program.summary(info.qualname)
            signature = (info.binds_receiver, info.n_positional, tuple(info.params), info.vararg, info.kwarg)
            bound = bindings.get(signature)
            if bound is None:
                bound = bindings[signature] = self.bind(info)
            for param, value in bound.items():
                known = facts.get(id(value))
                if known is None or known[0] is not value:
                    concrete, params = _origins([value])
                    futures = any(key[:1] != ("param",) for key in deep_pending(value))
                    flight = any(in_flight(leaf) for leaf in deep_leaves(value, through_lazy=True))
                    known = facts[id(value)] = (value, concrete, params, futures, flight)
                self.program.flow(caller, info.qualname, param, known[1], known[2], known[4])
                if known[3]:
                    self.program.activate(info.qualname)  # it may wait for the futures it is given
            bounds.append(bound)
            if summary is EMPTY_SUMMARY:
                self.effects.append(Record("edge", CallEdge(info.qualname, bound, self.assume, self.call_step)))
                settles = frozenset()
                continue
            if by_name and summary.returns != EMPTY:
                summary = by_name_summary(self.program, info.qualname, summary)
            results.append(self.apply_summary(info, summary, bound, exact=not by_name and len(targets) == 1))
            waited = summary.settles & frozenset(bound)
            settles = waited if settles is None else settles & waited
        for param in settles or ():  # every candidate waits for what this argument holds
            for bound in bounds:
                self.effects.append(Settle(bound[param]))
        result = join_all(results)
        if any(isinstance(info.node, ast.AsyncFunctionDef) for info in targets):
            # A coroutine object holds its arguments until it runs (awaited now, or later as
            # a task): ``create_task(consume(w))`` reads ``w`` after the caller moves on.
            result = join(result, container(join_all(self.args.flat()))) or EMPTY
        if self.constructed:
            return Value(types=frozenset({self.constructed}), alloc=frozenset({self.allocation_site()}))
        if len(targets) == 1:
            result = evolve(result, origin=targets[0].qualname)
        if any(isinstance(leaf, Borrow) for leaf in deep_leaves(result)):
            self.effects.append(Issue(result))  # the callee's borrowed objects are handed out here
        return result

    def adopt_future(self, future, bound: dict[int, Value], call_step: TraceStep, callkey: tuple) -> None:
        """A helper returned the future of a submission that is still running: it is pending
        here now, until this function waits for it (or its producer advances)."""
        it = self.it
        leaves = set()
        here = False
        for leaf in future.leaves:
            if isinstance(leaf, ParamRef):
                actual = bound.get(leaf.index)
                if actual is None:
                    continue
                here = here or "iter" in leaf.path
                for mine in deep_leaves(resolve(actual, leaf.path)):
                    leaves.add(mine.with_trace(mine.trace + (call_step,) + leaf.trace))
            else:
                here = True
                leaves.add(leaf.at_call(callkey, leaf.trace + (call_step,)))
        if not leaves or it.st is None:
            return
        here = here or future.rule != "BL001"
        site = future.site if here else it.site(self.node, self.name, self.subject(frozenset(leaves)))
        holder = None
        receiver_text = self.receiver_text(bound)
        if future.holder is not None and receiver_text:  # `self.pending` of the callee is `loader.pending` here
            holder = (receiver_text + future.holder[0][future.holder[0].index("."):], future.holder[1])
        pending = replace(
            future, key=_future_key(callkey, future.key), leaves=frozenset(leaves), site=site,
            assume=frozenset(it.st.assume), holder=holder, owners=frozenset(),
        )
        self.effects.append(Adopt(pending))

    def receiver_text(self, bound: dict[int, Value]) -> str | None:
        """How this function names the callee's receiver (``loader`` in ``loader.add(...)``)."""
        if self.receiver is None or not isinstance(self.node.func, ast.Attribute):
            return None
        return holder_name(self.node.func.value)

    def bind(self, info: FunctionInfo) -> dict[int, Value]:
        bound: dict[int, Value] = {}
        offset = 0
        if info.binds_receiver and self.receiver is not None:
            bound[0] = self.receiver
            offset = 1
        elif info.binds_receiver and self.constructed:
            bound[0] = Value(types=frozenset({self.constructed}))
            offset = 1
        position = offset
        extra: list[Value] = []
        for value, starred in self.args.positional:
            if starred:
                element = index(value, None)
                for i in range(position, info.n_positional):
                    bound[i] = join(bound.get(i), element)
                extra.append(element)
                continue
            if position < info.n_positional:
                bound[position] = value
            else:
                extra.append(value)
            position += 1
        if info.vararg is not None and extra:
            bound[info.vararg] = container(join_all(extra))
        names = {name: i for i, name in enumerate(info.params)}
        spill: list[Value] = []
        for key, value in self.args.keywords:
            if key is None:
                element = index(value, None)
                for i in range(len(info.params)):
                    if i not in bound and i not in (info.vararg, info.kwarg):
                        bound[i] = element
                spill.append(element)
            elif key in names:
                bound[names[key]] = value
            else:
                spill.append(value)
        if info.kwarg is not None and spill:
            bound[info.kwarg] = container(join_all(spill))
        return bound

    def reads_in_flight(self, reach, leaf) -> bool:
        """A callee reads its parameter before synchronising (BL005): it matters for a copy
        still in flight here, or for this function's own parameter if it has not synchronised."""
        st = self.it.st
        if isinstance(leaf, Borrow):
            return leaf.flight and leaf.site in st.flying
        return not st.synced

    def apply_summary(self, info: FunctionInfo, summary: Summary, bound: dict[int, Value], exact: bool = True) -> Value:
        """``exact``: the call surely goes to ``info``; what it does to its receiver's
        containers (emptying them) is only taken from a call that surely does."""
        it = self.it
        call_step = self.call_step
        edge = CallEdge(info.qualname, bound, self.assume, call_step)
        self.effects.append(Record("edge", edge))
        for reach in summary.sinks:
            for leaf, payload, assume, enablers in edge.through(reach):
                if not self.reads_in_flight(reach, leaf) if reach.rule == "BL005" else in_flight(leaf):
                    continue
                for enabler in enablers:
                    self.note_guard_use(enabler, payload)
                trace = leaf.trace + (call_step,) + reach.trace
                here = isinstance(leaf, Borrow) or ("iter" in leaf.path and reach.rule != "BL005")
                site = it.site(self.node, self.name, self.subject(frozenset({leaf}))) if here else None
                if isinstance(leaf, Borrow):
                    self.effects.append(Report(site, trace, reach.rule))
                else:
                    materialized = reach.materialized and not payload.lazy
                    reach_here = evolve(
                        reach, param=leaf.index, path=leaf.path, assume=assume, site=site, trace=trace,
                        materialized=materialized,
                    )
                    self.effects.append(Reach(reach_here))
        receiver_text = self.receiver_text(bound)
        for suffix, key in summary.releases if receiver_text and exact else ():
            self.effects.append(Release(receiver_text + suffix, key))
        for store in summary.field_stores:
            actual = bound.get(store.param)
            if actual is not None and has_leaves(actual):  # nothing to keep otherwise
                kept = _append_trace(resolve(actual, store.path), (call_step,) + store.trace)
                self.effects.append(KeepInField(store.owner, store.attr, kept, store.element, None))
        if summary.synchronizes:
            self.effects.append(Synchronize())
        if summary.advances:  # ``release_slot(ring)`` around ``ring.release(...)``
            self.effects.append(Advance(self.node, self.name))
        callkey = (self.node.lineno, self.node.col_offset)
        for future in summary.futures:
            self.adopt_future(future, bound, call_step, callkey)
        result = _instantiate(summary.returns, bound, self.returned_step, callkey)
        guards = {fact for p, tag in summary.guards if p in bound for fact in checked(bound[p], (tag,))}
        checks = {fact for p, tag in summary.marker_checks if p in bound for fact in checked(bound[p], (tag,))}
        if guards or checks:
            result = replace(result, cond=Cond(frozenset(guards), frozenset(checks)))
        return result


def _calls_with_own_arguments(wrapper: FunctionInfo, wrapped: str | None) -> bool:
    """Does ``wrapper`` call ``wrapped`` (its decorator's parameter) with exactly the
    arguments it was given (``func(*args, **kwargs)``)?"""
    own = set(wrapper.params)
    for node in ast.walk(wrapper.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == wrapped:
            passed = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
            passed += [k.value for k in node.keywords]
            if all(isinstance(a, ast.Name) and a.id in own for a in passed):
                return True
    return False


def _attribute_lookup(it: "FunctionInterpreter", func: ast.expr) -> bool:
    """Is ``func`` ``getattr(obj, "name", default)``?"""
    if not (isinstance(func, ast.Call) and len(func.args) == 3 and not func.keywords):
        return False
    name = func.args[1]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return False
    return it.eval(func.func).ref == "builtins.getattr"


def _future_key(callkey: tuple, key: tuple) -> tuple:
    """A callee's submission seen from this call: keyed by the call and the submission's own
    position (bounded, so recursion through helpers that return futures converges)."""
    return callkey + key[-2:]


def enabling_condition(enabler: Value) -> tuple[frozenset, frozenset]:
    """What an argument that switches the async path on tells: a guard's verdict cleans the
    values it inspected; a parameter becomes an assumption of the summary."""
    cleaned = enabler.cond.clean_if_true if enabler.cond is not None else frozenset()
    params = [leaf for leaf in enabler.leaves if isinstance(leaf, ParamRef) and leaf.path == ()]
    assume = frozenset({(params[0].index, True)}) if len(params) == 1 and len(enabler.leaves) == 1 else frozenset()
    return assume, cleaned


class CallEdge:
    """A call of a project function with its bound arguments: how the callee's reaches
    (summary ones now, reported-site ones in the program's final propagation) come back."""

    __slots__ = ("callee", "bound", "assume", "step")

    def __init__(self, callee: str, bound: dict, assume: frozenset, step: TraceStep) -> None:
        self.callee, self.bound, self.assume, self.step = callee, bound, assume, step

    def through(self, reach):
        """For each leaf of the argument the reach's path selects: (leaf, payload, the
        caller's assumptions, the values that enabled the sink)."""
        cleaned: frozenset = frozenset()
        assume = set(self.assume)
        enablers = []
        for param, truth in reach.assume:
            actual = self.bound.get(param)
            if actual is None:
                continue
            if actual.has_const and bool(actual.const) != truth:
                return
            if truth:
                enablers.append(actual)
                extra_assume, extra_clean = enabling_condition(actual)
                assume |= extra_assume
                cleaned |= extra_clean
        actual = self.bound.get(reach.param)
        if actual is None:
            return
        payload = clean(resolve(actual, reach.path), cleaned)
        if reach.materialized and payload.lazy and reach.kept is not None:
            leaves = (  # the parts of the stream's elements that were kept
                leaf for sub in reach.kept for leaf in deep_leaves(resolve(payload.elems or EMPTY, sub), through_lazy=True)
            )
        elif reach.materialized and payload.lazy:
            leaves = deep_leaves(payload.elems, through_lazy=True)  # the stream's elements
        elif reach.materialized:
            leaves = (leaf for leaf in payload.leaves if isinstance(leaf, ParamRef))  # maybe a stream
        else:
            leaves = deep_leaves(payload)
        for leaf in set(leaves):
            yield leaf, payload, frozenset(assume), enablers


def by_name_summary(program, qualname: str, summary: Summary) -> Summary:
    """``summary`` whose result keeps only the borrowed values the function makes, not those
    it passes through from its parameters (how a call by method name sees it); made once
    per summary, not once per call."""
    known = program.by_name_summaries.get(qualname)
    if known is None or known[0] is not summary:
        dropped = replace(summary, returns=map_leaves(summary.returns, _drop_params))
        known = program.by_name_summaries[qualname] = (summary, dropped)
    return known[1]


def _drop_params(leaf):
    return None if isinstance(leaf, ParamRef) else leaf


def borrowed_from(it: "FunctionInterpreter", node: ast.AST, spec: SourceSpec, what: str) -> Value:
    """What source ``spec`` hands out at ``node`` (a call, or an attribute read ``what``)."""
    site = (it.info.qualname, node.lineno, node.col_offset)
    condition = f" {spec.condition}" if spec.condition else ""
    step = it.step(node, f"`{what}` hands out borrowed views of a reused buffer{condition}")
    # for words and fixes; a version-conditioned source adds when it lends and the floor
    version = (spec.condition, spec.admitted, spec.floor) if spec.condition else ()
    step = replace(step, fact=("source", spec.kind, str(spec.produces), *version))
    return _shape_value(spec.produces, Borrow(site, False, (step,), kind=spec.kind))


def _shape_value(shape: Shape, leaf: Borrow) -> Value:
    if shape.kind == "borrowed":
        return Value(leaves=frozenset({leaf}))
    if shape.kind == "owned":
        return EMPTY
    if shape.kind == "tuple":
        return container(None, tuple(_shape_value(s, leaf) for s in shape.items))
    inner = _shape_value(shape.items[-1], leaf)
    return container(inner, lazy=shape.kind == "iter")


def _instantiate(value: Value, bound: dict[int, Value], step: TraceStep, callkey: tuple) -> Value:
    """A callee's result at this call: parameters replaced by the arguments, the callee's own
    borrowed objects re-identified per call site."""
    if value == EMPTY:
        return EMPTY
    own = set()
    extra = []
    for leaf in value.leaves:
        if isinstance(leaf, ParamRef):
            actual = bound.get(leaf.index)
            if actual is not None:
                resolved = resolve(actual, leaf.path)
                extra.append(_append_trace(resolved, leaf.trace + (step,)))
        else:
            own.add(leaf.at_call(callkey, leaf.trace + (step,)))
    elems = _instantiate(value.elems, bound, step, callkey) if value.elems is not None else None
    items = tuple(_instantiate(i, bound, step, callkey) for i in value.items) if value.items is not None else None
    base = Value(
        leaves=frozenset(own),
        elems=elems if elems is not None and elems != EMPTY else None,
        items=items,
        lazy=value.lazy,
        const=value.const,
        has_const=value.has_const,
        types=value.types,
        # A parameter's stand-in means nothing here: the argument's own futures came back
        # through ``resolve`` above.
        pending=frozenset(_future_key(callkey, key) for key in value.pending if key[:1] != ("param",)),
    )
    return join_all([base] + extra)


def _append_trace(value: Value, steps: tuple) -> Value:
    return map_leaves(value, lambda leaf: leaf.with_trace(leaf.trace + steps))


def shape_of(it: "FunctionInterpreter", node: ast.expr, values: dict[int, Value]) -> CallShape | None:
    """The call shape of a ``with`` item (``torch.cuda.stream(s)``), from the values its
    parts evaluated to."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        receiver = values.get(id(func.value), EMPTY)
        if receiver.ref is not None and not receiver.leaves:
            return CallShape(it.program.index.canonical(f"{receiver.ref}.{func.attr}"), None, frozenset(), _no_arguments)
        return CallShape(None, func.attr, receiver.types | receiver.declared, _no_arguments)
    callee = values.get(id(func), EMPTY)
    return CallShape(callee.ref, None, frozenset(), _no_arguments) if callee.ref else None


def _no_arguments(name: str, position: int | None = None) -> tuple[str, object]:
    return "absent", None


# What a call matching each kind of pack entry does, in the order they are tried: waiting
# and device synchronisation first, then what creates borrowed values or consumes them
# asynchronously, then what copies, judges or aliases them.
HANDLERS = (
    ("synchronizers", Call.on_synchronizer),
    ("settlers", Call.on_settler),
    ("drains", Call.on_drain),
    ("sources", Call.source),
    ("sinks", Call.sink),
    ("sanitizers", Call.on_sanitizer),
    ("guards", Call.on_guard),
    ("views", Call.on_view),
    ("retainers", Call.on_retainer),
    ("binds", Call.on_bind),
    ("passthrough", Call.on_passthrough),
)
