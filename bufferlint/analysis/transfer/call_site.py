"""One call being evaluated: its arguments (``Args``) and its context (``CallSite``: what is
called, on which receiver, from where), with the effect records its handlers produce
(``call_effects``). The handlers (``call_language``, ``call_project``, ``call_packs``) read
the call through this and never change the interpreter."""

from __future__ import annotations

import ast
from dataclasses import replace
from functools import cached_property
from typing import Callable, Iterable

from bufferlint.analysis.domain.conditions import TRUTHY, ParamTest, exact_parameter
from bufferlint.analysis.domain.state import is_stand_in
from bufferlint.analysis.domain.summaries import returns_borrowed
from bufferlint.analysis.domain.values import (
    Borrow, Leaf, ParamRef, Preset, Value, deep_leaves, deep_pending, index, map_leaves, program_memory,
)
from bufferlint.analysis.frontend.constants import fold_device
from bufferlint.analysis.frontend.imports import Reached
from bufferlint.analysis.frontend.index import AttachedCallable, FunctionInfo, dotted_name
from bufferlint.analysis.frontend.syntax import holder_name
from bufferlint.analysis.frontend.vocabmatch import CallShape
from bufferlint.analysis.transfer.call_effects import Record
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.stores import Stores
from bufferlint.analysis.world import is_hot
from bufferlint.findings import BY_NAME, DECIDED_BY, TraceStep


class Args:
    """A call's evaluated arguments, and what each argument expression (and its parts)
    evaluated to (``values``: which one carries a borrowed value, for a finding's subject)."""

    def __init__(
        self, positional: list[tuple[Value, bool]], keywords: list[tuple[str | None, Value]], values: dict[int, Value],
        node: ast.Call | None = None, ahead: int = 0,
    ) -> None:
        self.positional = positional  # (value, starred)
        self.keywords = keywords  # (name, value); None for ``**mapping``
        self.values = values
        # The call written (``length`` reads its displays only when a pack condition asks),
        # and how many positional arguments a ``functools.partial`` binds ahead of its own
        self.node, self.ahead = node, ahead

    def length(self, name: str, position: int | None = None) -> int | None:
        """How many elements the display the call writes as parameter ``name`` has
        (``wait([future])`` passes one future); None when it is not a display written there
        (a list's value keeps no count)."""
        node = self.node
        if node is None:
            return None
        written = next((k.value for k in node.keywords if k.arg == name), None)
        if written is None and position is not None and self.arg(position) is not None:
            index = position - self.ahead
            written = node.args[index] if 0 <= index < len(node.args) else None
        if isinstance(written, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in written.elts):
            return len(written.elts)
        return None

    def first(self, name: str | None) -> Value | None:
        """The value a function-style view or wrapper acts on: its first argument, passed by
        position or by ``name`` (the pack's signature: ``torch.narrow(input=w, ...)``,
        ``nn.Parameter(data=w)``)."""
        if self.positional:
            value, starred = self.positional[0]
            return index(value, None) if starred else value
        return self.keyword(name) if name is not None else None

    def keyword(self, name: str) -> Value | None:
        for key, value in reversed(self.keywords):  # the last: a call's own replaces a partial's
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
            return self.unpacked(name)
        if value.has_const:
            return "const", value.const
        if value.ref is not None and not value.leaves:
            return "const", value.ref
        if name == "device" and value.host:  # ``t.to(cpu_tensor)``: that tensor's device and dtype
            return "const", "cpu"
        return "unknown", None

    def unpacked(self, name: str) -> tuple[str, object]:
        """How the ``*args`` and ``**mapping`` of the call pass parameter ``name`` when no
        argument names it: "absent" when there are none, or every mapping's keys are known
        (``Value.keys``) and none holds it; "const" when each entry holding it is the same
        constant, on every path; else "unknown"."""
        entries = self.mapping_entries(name)
        if entries is None:
            return "unknown", None
        if not entries:
            return "absent", None
        first = entries[0][0]
        if all(v.has_const and not when and v.const == first.const and type(v.const) is type(first.const)
               for v, when in entries):
            return "const", first.const
        return "unknown", None

    def mapping_entries(self, name: str) -> list[tuple[Value, frozenset]] | None:
        """The entries of the call's ``**mapping``s under ``name`` (value, the conditions it
        is there under); None when some mapping's keys, or a ``*args``, are not known."""
        if any(s for _, s in self.positional):
            return None
        entries: list[tuple[Value, frozenset]] = []
        for key, value in self.keywords:
            if key is None:
                if value.keys is None:
                    return None
                entries.extend((v, when) for k, v, when in value.keys if k == name)
        return entries

    def keyword_when(self, name: str, position: int | None, accepts: Callable[[object], bool]) -> frozenset:
        """The conditions under which the call's ``**mapping``s pass ``name`` a value that
        ``accepts`` may take (``kwargs["non_blocking"] = True`` stored only where ``device not
        in _CPU_DEVICES``): those every such entry is stored under (their disjunction implies
        them). Empty when an argument names it, or nothing is known of the entries."""
        if self.keyword(name) is not None or (position is not None and self.arg(position) is not None):
            return frozenset()
        entries = self.mapping_entries(name)
        whens = [when for v, when in entries or () if not v.has_const or accepts(v.const)]
        return frozenset.intersection(*whens) if whens else frozenset()

    def device(self) -> str | None:
        """The device a device constructor's arguments make (``torch.device("cuda", 0)``)."""
        if any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords):
            return None
        positional = [(v.has_const, v.const) for v, _ in self.positional]
        keywords = {k: (v.has_const, v.const) for k, v in self.keywords if k is not None}
        return fold_device(positional, keywords)

    def names_a_reference(self, name: str, position: int | None) -> bool:
        """Is the argument a static name the index has no constant for (a module, class,
        function, or a constant of a module not parsed yet)?"""
        value = self.keyword(name) or (self.arg(position) if position is not None else None)
        return value is not None and not value.has_const and value.ref is not None and not value.leaves

    def declared(self, name: str, position: int | None = None) -> frozenset:
        """The types the value passed as parameter ``name`` is declared with (an annotated
        parameter passed on: ``dev: torch.device``); empty when nothing is passed there."""
        value = self.arg(position, name) if position is not None else self.keyword(name)
        return value.declared if value is not None else frozenset()

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

    def after(self, preset: Preset) -> "Args":
        """These arguments after what a ``functools.partial`` binds ahead of them (a keyword
        passed here again replaces the bound one: binding takes the last)."""
        positional = [(value, False) for value in preset.positional] + self.positional
        keywords: list[tuple[str | None, Value]] = [*preset.keywords, *self.keywords]
        return Args(positional, keywords, self.values, self.node, self.ahead + len(preset.positional))

    def fit(self, info: FunctionInfo) -> bool:
        starred = any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords)
        keywords = {k for k, _ in self.keywords if k is not None}
        return info.accepts(None if starred else len(self.positional), keywords, bound_receiver=True)

    def fit_plain(self, info: FunctionInfo) -> bool:
        """Could this call bind to a function called without a receiver?"""
        starred = any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords)
        keywords = {k for k, _ in self.keywords if k is not None}
        return info.accepts(None if starred else len(self.positional), keywords, bound_receiver=False)

    def fit_attached(self, attached: AttachedCallable) -> bool:
        """Could this call, after what a partial binds ahead of it, bind to an attached
        function (a method: bound to an instance of its class)?"""
        starred = any(s for _, s in self.positional) or any(k is None for k, _ in self.keywords)
        keywords = {k for k, _ in self.keywords if k is not None} | set(attached.keywords)
        given = None if starred else len(self.positional) + attached.ahead
        return attached.info.accepts(given, keywords, bound_receiver=True)

    def origins(self, receiver: Value | None) -> tuple[bool, frozenset]:
        """Whether the arguments carry a concrete borrowed value, and which of the caller's
        parameters they derive from: the facts that decide whether the callee matters."""
        values = self.flat() + ([receiver] if receiver is not None else [])
        return origins(values)

    def pinned_memory(self) -> bool:
        """Do the arguments hold a pinned buffer of the caller's?"""
        return pinned_memory(self.flat())


def pinned_memory(values) -> bool:
    """Do the values hold a pinned buffer (``origins`` leaves it out)? A copy in flight does
    not ask for more files: on sglang 0.5.23 that doubled the cold run."""
    return any(isinstance(leaf, Borrow) and leaf.pinned
               for value in values for leaf in deep_leaves(value, through_lazy=True))


def origins(values) -> tuple[bool, frozenset]:
    """(holds a producer's borrowed object, the parameters it may come from). Device copies
    in flight and pinned buffers are no producer's: they reach callees through
    ``Program.flight_hot`` alone, or not at all."""
    concrete, params = False, set()
    for value in values:
        for leaf in deep_leaves(value, through_lazy=True):
            if isinstance(leaf, Borrow):
                concrete = concrete or not (leaf.flight or leaf.pinned)
            else:
                params.add(leaf.index)
    return concrete, frozenset(params)


class ArgumentReader:
    """How a call passes a parameter, as the pack conditions read it (``CallShape.argument``):
    ``Args.argument``, or ("parameter", (index, default known, default)) for a parameter of
    the calling function passed on unchanged: its value is what each caller passes
    (``Borrow.when``), else its default. A static name of the project that is no known
    constant asks for its module (a constant of a module not parsed yet). Kept apart from
    ``CallSite`` so the shape holds no reference back to the call (no cycle to collect)."""

    __slots__ = ("args", "defaults", "program", "effects")

    def __init__(self, args: Args, defaults: dict[int, object], program, effects: list) -> None:
        self.args, self.defaults, self.program, self.effects = args, defaults, program, effects

    def __call__(self, name: str, position: int | None = None) -> tuple[str, object]:
        args = self.args
        how, value = args.argument(name, position)
        if how == "const" and isinstance(value, str) and args.names_a_reference(name, position):
            if self.program.in_project(value):
                self.effects.append(Record("demand", ("qualname", value)))
        if how == "unknown":
            param = exact_parameter(args.keyword(name) or (args.arg(position) if position is not None else None))
            if param is not None:
                return "parameter", (param, param in self.defaults, self.defaults.get(param))
        return how, value


class CallSite:
    """A call being evaluated: the callee (``qualname``, or ``method`` of ``receiver``), its
    arguments, where it is, and the effect records its handlers produce (``effects``)."""

    def __init__(
        self,
        frame: Frame,
        stores: Stores,
        node: ast.Call,
        qualname: str | None,
        method: str | None,
        receiver: Value | None,
        args: Args,
        name: str,
    ) -> None:
        self.frame = frame
        self.stores = stores
        self.node = node
        self.qualname = qualname
        self.method = method
        self.receiver = receiver
        self.args = args
        self.name = name
        self.program = frame.program
        self.vocab = frame.vocab
        self.constructed: str | None = None
        self.fallback: str | None = None  # a ``getattr`` default, called when the attribute is missing
        # A call of a value that is one of these classes (``chosen()``): ``(qualname, when)``
        self.classes: frozenset = frozenset()
        self.functions: frozenset = frozenset()  # a call of a value that is one of these functions
        # Targets reached only under conditions on the parameters: a method of a receiver
        # that is an instance of its class only under them (``Value.type_when``)
        self.target_when: dict[str, frozenset] = {}
        self.effects: list = []  # what the call does besides its value (``call_effects``)
        self.targets: list[str] = []  # the project functions it may reach
        # ``self.m()`` reaching the overrides of ``m`` too: the method the call names, which
        # stands for them all as the function whose value is used (a guard is judged with them)
        self.dispatched_from: str | None = None
        # Wrappers a decorator returned that return what the function they wrap returns
        # (``functools.wraps`` style): their effects apply, their value is the wrapped one's
        self.transparent: set[str] = set()
        # Resolved only by method name (the receiver's type is unknown): its steps say so, and
        # a trace through fewer such guesses is preferred (``findings.preferred_trace``).
        self.by_name = False
        self.callee: Value | None = None  # the callee expression's value (a call of a value)
        # A call-back (``CallResolver.call_back``): the callee's call of its parameter (the
        # trace step into the callable) and the conditions it holds under there
        self.callback: tuple[TraceStep, frozenset] | None = None
        vocab_name = qualname[len("builtins."):] if qualname and qualname.startswith("builtins.") else qualname
        known = (receiver.types | receiver.declared) if receiver is not None else frozenset()
        classes = self.program.index.classes
        if any(name in classes for name in known):
            # A project subclass of a pack class is still one (``class MyPool(ThreadPoolExecutor)``).
            known = frozenset(a for t in known for a in self.program.index.class_ancestors(t))
        self.shape = CallShape(vocab_name, method, known, ArgumentReader(args, frame.defaults, self.program, self.effects),
                               args.length, args.declared)

    def argument(self, name: str, position: int | None = None) -> tuple[str, object]:
        """How the call passes a parameter, as pack conditions read it (``ArgumentReader``)."""
        return self.shape.argument(name, position)

    def step(self, note: str) -> TraceStep:
        return self.frame.step(self.node, note)

    # Made once per call, whatever number of project functions it may reach (after
    # ``by_name`` is set: ``apply_project`` sets it before it makes either).
    @cached_property
    def call_step(self) -> TraceStep:
        if self.callback is not None:
            return self._project_step(f"the callback is `{self.name}`, passed here")
        return self._project_step(f"passed to `{self.name}(...)`")

    def by_name_step(self, info: FunctionInfo, why: Reached | None) -> TraceStep:
        """The step into ``info`` of a call resolved by method name, saying why its class
        can be the receiver: a module this one's imports load (directly or not), a package
        a registry on the way loads by name, or none (``None``: no method of that name is
        in a module loaded from here, so every one is taken). A step by name, as
        ``call_step`` is for such a call (``findings.preferred_trace``)."""
        method = info.display.rpartition(":")[2]
        if why is None:
            how = "like every project method of that name (none is in a module imported from here)"
        elif why[0] == "registry":
            how = f"`{why[1]}` imports every module of `{why[2]}`"
        else:
            how = "its module imported from here"
        return replace(self.step(f"passed to `{self.name}(...)`: `{method}` by name, {how}"), fact=(BY_NAME,))

    @cached_property
    def returned_step(self) -> TraceStep:
        return self._project_step(f"returned by `{self.name}(...)`")

    def _project_step(self, note: str) -> TraceStep:
        step = self.step(note)
        return replace(step, fact=(BY_NAME,)) if self.by_name else step

    @cached_property
    def assume(self) -> frozenset:
        here = frozenset(self.frame.st.assume)  # type: ignore[union-attr]  # evaluated in a reachable state
        return here | self.callback[1] if self.callback is not None else here

    @property
    def caller(self) -> str:
        return self.frame.info.qualname

    def allocation_site(self) -> tuple:
        return (self.caller, self.node.lineno, self.node.col_offset)

    def demand(self, kind: str, name: str, receiver: Value | None) -> None:
        """Ask for the files defining ``name`` if what we pass it may be borrowed, or is a
        producer its construction decides about (``produced.parameter_produces``), or is a
        pinned buffer of ours (a helper in another module that writes it before
        synchronising: ``Program.pinned_hot``; only runs that select the host-buffer rule make one), or is a
        future of work still in flight (``await_sent(tracker)``: it may wait for it)."""
        concrete, params = self.args.origins(receiver)
        if is_hot(self.program, self.caller, concrete, params) or any(
                value.built or self.iterates_to_borrowed(value) for value in self.args.flat()) \
                or self.args.pinned_memory() or self.passes_work():
            self.effects.append(Record("demand", (kind, name)))

    def iterates_to_borrowed(self, value: Value) -> bool:
        """Is ``value`` an object built here of a project class whose ``__iter__`` hands out
        borrowed values (a re-iterable wrapper around a producer)? A function it is passed to
        may iterate it (``call_project._iterated``)."""
        index, program = self.program.index, self.program
        for type_name in value.types:
            method = index.class_method(type_name, "__iter__") if type_name in index.classes else None
            if method is not None:
                self.effects.append(Record("returns", method))
                if returns_borrowed(program.summary(method)):
                    return True
        return False

    def passes_work(self) -> bool:
        """Does an argument hold a future of this function's work still pending (not a
        stand-in for its callers')?"""
        st = self.frame.st
        live = frozenset(p.key for p in st.pending if not is_stand_in(p)) if st is not None else frozenset()
        return bool(live) and any(deep_pending(value) & live for value in self.args.flat())

    def note_guard_use(self, enabler: Value | None, payload: Value) -> None:
        """A project predicate deciding whether values are consumed async is used as a guard."""
        if enabler is not None and enabler.origin is not None and next(deep_leaves(payload), None) is not None:
            self.effects.append(Record("guard-use", enabler.origin))

    def note_tested_guards(self, payload: Value) -> None:
        """``if self.guard(w): pool.submit(fn, w)``: a project predicate whose True led here,
        asked about a borrowed object this call consumes, decides whether the object is
        consumed: it is used as a guard (``State.tested``)."""
        tested = self.frame.st.tested if self.frame.st is not None else frozenset()
        if not tested:
            return
        bases = {leaf.base for leaf in deep_leaves(payload) if isinstance(leaf, Borrow) and not program_memory(leaf)}
        for origin in sorted({origin for origin, base in tested if base in bases}):
            self.effects.append(Record("guard-use", origin))

    def asked_about(self) -> frozenset:
        """The borrowed objects (``Leaf.base``) this call's arguments carry: what its
        verdict is about, when a consumer's switch or an ``if`` uses it (``Value.asked``)."""
        return frozenset(leaf.base for value in self.args.flat() for leaf in deep_leaves(value)
                         if isinstance(leaf, (Borrow, ParamRef)) and not program_memory(leaf))

    def deciders(self, enablers: Iterable[Value | None]) -> dict[tuple, frozenset[str]]:
        """Which project predicates decided that each borrowed object (by ``Leaf.base``) is
        consumed here: a verdict switching the consumer on (``use_async=g(w)``) or an
        ``if g(w):`` whose True led here (``State.tested``), asked about that object."""
        found: dict[tuple, set[str]] = {}
        for enabler in enablers:
            if enabler is not None and enabler.origin is not None:
                for base in enabler.asked:
                    found.setdefault(base, set()).add(enabler.origin)
        for origin, base in self.frame.st.tested if self.frame.st is not None else ():
            found.setdefault(base, set()).add(origin)
        return {base: frozenset(origins) for base, origins in found.items()}

    def decided_step(self, deciders: dict[tuple, frozenset[str]], leaf: Leaf) -> tuple[TraceStep, ...]:
        """The step saying which predicates decided that ``leaf`` is consumed here (none if
        none did): a finding every path of which such a step names a guard reported as
        approving marked values is that guard's finding (``ProjectAnalysis.cover_decided``)."""
        origins = deciders.get(leaf.base) if deciders else None
        if not origins:
            return ()
        names = " or ".join(f"`{origin.rpartition('.')[2]}(...)`" for origin in sorted(origins))
        return (replace(self.step(f"consumed here when {names} approves it"), fact=(DECIDED_BY, tuple(sorted(origins)))),)

    def with_deciders(self, enablers: Iterable[Value | None], payload: Value) -> Value:
        """``payload`` with the step naming what decided each of its objects is consumed here."""
        deciders = self.deciders(enablers)
        if not deciders:
            return payload
        return map_leaves(payload, lambda leaf: leaf.with_trace(leaf.trace + self.decided_step(deciders, leaf)))

    def receiver_identity(self) -> frozenset:
        """Which object the receiver is, for the calls that wait for all its work
        (``executor.shutdown()``, ``queue.join()``): where it was made, if known; else the
        dotted name this function calls it by (``self.pool``, ``worker.inbox``, a parameter
        ``q``), taken to name one object through the function."""
        receiver = self.receiver
        if receiver is not None and receiver.alloc:
            return receiver.alloc
        func = self.node.func
        name = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
        return frozenset({("named", name)}) if name else frozenset()

    def receiver_text(self) -> str | None:
        """How this function names the callee's receiver (``loader`` in ``loader.add(...)``):
        an override delegating to the class it extends (``super().stage(w)``, or
        ``Base.stage(self, w)``) passes its own receiver, so what the callee keeps in its
        receiver's fields is kept in this method's (``self._inflight``)."""
        func = self.node.func
        if not isinstance(func, ast.Attribute):
            return None
        if _is_super_call(func.value):
            return self.frame.receiver_name
        if self.receiver is None:
            return self._unbound_receiver_text()
        return holder_name(func.value)

    def _unbound_receiver_text(self) -> str | None:
        """``Base.stage(self, w)`` in a method: a method of a class called through the class,
        with this method's receiver passed first."""
        mine = self.frame.receiver_name
        first = self.node.args[0] if self.node.args else None
        if mine is None or not isinstance(first, ast.Name) or first.id != mine:
            return None
        qualname = self.qualname
        owner = qualname.rsplit(".", 1)[0] if qualname and "." in qualname else None
        return mine if owner in self.program.index.classes else None

    def subject(self, leaves: frozenset) -> str:
        """The source of the argument that carries these borrowed leaves (descending into a
        tuple or list literal), so a fix can name the value to guard."""
        tiers = (
            {leaf for leaf in leaves if isinstance(leaf, Borrow)},
            {leaf for leaf in leaves if isinstance(leaf, ParamRef) and "iter" in leaf.path},
            set(leaves),
        )
        base_ids = {leaf.base for leaf in next((tier for tier in tiers if tier), set())}
        values = self.args.values

        def carries(expr: ast.expr) -> bool:
            value = values.get(id(expr))
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


def enabling_condition(enabler: Value, defaults: dict[int, object]) -> tuple[frozenset, frozenset]:
    """What an argument that switches the async path on tells: a guard's verdict cleans the
    values it inspected; a parameter passed on becomes a condition of the summary (true, or
    its default ``defaults`` says it is when the caller passes nothing)."""
    cleaned = enabler.cond.clean_if_true if enabler.cond is not None else frozenset()
    param = exact_parameter(enabler)
    assume = frozenset({ParamTest(param, TRUTHY).on(param, defaults)}) if param is not None else frozenset()
    return assume, cleaned


def _is_super_call(node: ast.expr) -> bool:
    """``super()`` or ``super(Cls, self)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
