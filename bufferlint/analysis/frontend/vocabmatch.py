"""Match calls against the rule packs' call patterns, indexed by the called name.

A call is described by its static qualified name (``torch.clone``) or by a method name with
the receiver's known classes (``ThreadPoolExecutor`` -> ``...ThreadPoolExecutor.submit``)
or no known class at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from bufferlint.packs import PACK_KEYS, CallPattern, Vocabulary, builtin_pack_dir


@dataclass(frozen=True)
class CallShape:
    qualname: str | None  # static target, when the callee is a name we could resolve
    method: str | None  # attribute name, for calls on an object
    receiver_types: frozenset  # receiver classes, when known
    # (keyword, position or None) -> ("absent" | "const" | "parameter" | "unknown", constant
    # value); "parameter": one of the calling function's, passed on: (index, default known, default)
    argument: Callable[[str, "int | None"], tuple[str, object]]
    # (keyword, position or None) -> how many elements the display passed there has (None:
    # not a display, or not passed): ``len(kw@N)=n`` conditions
    length: Callable[[str, "int | None"], "int | None"] = lambda name, position: None
    # (keyword, position or None) -> the types the argument is declared with (``dev:
    # torch.device``): a device not known but declared one (``_declared_accelerator``)
    declared: Callable[[str, "int | None"], frozenset] = lambda name, position: frozenset()

    @property
    def last_name(self) -> str | None:
        return self.method or (self.qualname.rsplit(".", 1)[-1] if self.qualname else None)


# How surely a call's arguments must satisfy a pattern's conditions (``VocabIndex._matches``).
SURE, MAY, HAZARD = "sure", "may", "hazard"


class VocabIndex:
    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self._by_name: dict[str, list[tuple[str, object, CallPattern]]] = {}
        # Patterns naming every function of a module (``torch.*``), by kind, tried on the
        # calls whose qualified name starts with their prefix
        self._by_prefix: dict[str, list[tuple[object, CallPattern]]] = {}
        self._attributes: dict[str, list[tuple[str, object]]] = {}  # attr -> (owner class, source)
        for key in PACK_KEYS:  # entries by their call patterns' last names
            if key.matched == "calls":
                for spec in getattr(vocab, key.field):
                    self._add(key.key, spec, spec.calls)
            elif key.matched == "pattern":
                for pattern in getattr(vocab, key.field):
                    self._add(key.key, pattern, (pattern,))
        # Methods of producers their construction decides about (``owned-if``'s ``built-by``:
        # ``tensors`` of ``instanttensor.safe_open``), called without arguments the patterns
        # ask about: called on a parameter, what they hand out is each caller's object's to say.
        self.built_methods = frozenset(
            pattern.last_name for spec in vocab.sources if by_construction(spec)
            for pattern in spec.calls if not pattern.required_kwargs and pattern.name.count(".") >= 2
        )
        for spec in vocab.sources:  # a source's sub-keys: what advances it, and attributes that borrow
            self._add("advances", spec, spec.advances)
            self._add("ready-after", spec, spec.ready_after)
            for cond in spec.owned_if:  # calls that build a producer whose later calls lend or not
                if cond.built_by is not None:
                    self._add("constructions", cond, (cond.built_by,))
            for pattern in spec.attributes:
                owner, _, attr = pattern.name.rpartition(".")
                self._attributes.setdefault(attr, []).append((owner, spec))
        self.device_kinds = frozenset(kind.name for kind in vocab.kinds.values() if kind.on_device)
        # The classes of the values the kinds name (``torch.Tensor``, ``numpy.ndarray``,
        # ``memoryview``): their methods called through the class act on the instance passed first
        self._value_classes = frozenset(t for kind in vocab.kinds.values() for t in kind.types)
        self.markers = frozenset(vocab.markers)
        self._marker_tags = {marker: marker_tags(vocab, marker) for marker in self.markers}
        self._marked_classes = {
            marker: frozenset(c for kind in vocab.kinds.values() if marker in kind.markers for c in kind.marked_classes)
            for marker in self.markers
        }
        # What a marker check's text may name: the markers, and the marked classes' own names
        # (``isinstance(w, StreamedTensor)``).
        self.marker_words = self.markers | {c.rsplit(".", 1)[-1] for cs in self._marked_classes.values() for c in cs}
        self._builtin_prefix = str(builtin_pack_dir())
        self._methods: dict[str, bool] = {}
        self._classes: frozenset[str] | None = None  # classes pack patterns name methods of
        self.signatures = vocab.signatures
        self.view_parameters = vocab.view_parameters
        self.dtype_conversions = vocab.dtype_conversions
        self.retained_in = vocab.retained_in
        self.view_attributes = frozenset(vocab.view_attributes)
        self.done_flags = frozenset(pattern.last_name for pattern in vocab.done_flags)

    def is_value_class(self, qualname: str) -> bool:
        """Is ``qualname`` (``torch.Tensor``, ``builtins.memoryview``) the class of values a
        kind names? ``torch.Tensor.to(w, dev)`` is then ``w.to(dev)``."""
        return qualname.removeprefix("builtins.") in self._value_classes

    def marker_tags(self, marker: str) -> tuple:
        """The guard-fact tags of a check of ``marker`` (see ``values.clean``)."""
        return self._marker_tags.get(marker, (None,))

    def library_constant(self, qualname: str) -> tuple[bool, object]:
        """A library's name for a marker (kinds' ``marker-constants``): ``(True, marker)``."""
        return self.vocab.library_constant(qualname)

    def marked_classes(self, marker: str) -> frozenset[str]:
        """The classes whose instances carry ``marker`` (kinds' ``marked-classes``)."""
        return self._marked_classes.get(marker, frozenset())

    def marker_kind(self, marker: str) -> str:
        """The kind a value marked with ``marker`` is of ("" when no single kind claims it)."""
        tags = self.marker_tags(marker)
        return tags[0] if len(tags) == 1 and tags[0] is not None else ""

    def first_param(self, pattern: CallPattern) -> str | None:
        """The name of a function's first parameter, from the packs' ``signatures``."""
        params = self.signatures.get(pattern.qualname or "")
        return params[0] if params else None

    def converts_to(self, pattern: CallPattern) -> str | None:
        """The dtype a view converts to (pack ``dtype-conversions``: ``.float`` ->
        ``torch.float32``), None for a view that keeps the dtype or says none."""
        return self.dtype_conversions.get(str(pattern))

    def converts_from(self, dtype: str | None) -> bool:
        """Is ``dtype`` one the conversions name (so told apart from theirs)? An alias
        (``torch.half``) or a dtype not known is not: it may be theirs."""
        return dtype is not None and dtype in self.dtype_conversions.values()

    def viewed_param(self, pattern: CallPattern) -> tuple[str, int | None] | None:
        """The parameter a function-style view acts on when the packs' ``view-parameters``
        say it is not the first (``numpy.ndarray``'s ``buffer``): its name and position
        (from ``signatures``; None when they do not list it)."""
        name = self.view_parameters.get(pattern.qualname or "")
        if name is None:
            return None
        params = self.signatures.get(pattern.qualname or "", ())
        return name, params.index(name) if name in params else None

    def holder_position(self, pattern: CallPattern) -> int | None:
        """Where a function-style retainer keeps its other arguments: its first (0), or the
        parameter the packs' ``retained-in`` name (its position from ``signatures``; None
        when they do not list it)."""
        name = self.retained_in.get(pattern.qualname or "")
        if name is None:
            return 0
        params = self.signatures.get(pattern.qualname or "", ())
        return params.index(name) if name in params else None

    def _add(self, kind: str, spec: object, patterns) -> None:
        for pattern in patterns:
            if pattern.prefix is not None:
                self._by_prefix.setdefault(kind, []).append((spec, pattern))
            else:
                self._by_name.setdefault(pattern.last_name, []).append((kind, spec, pattern))

    def _candidates(self, kind: str, call: CallShape) -> Iterator[tuple[object, CallPattern]]:
        """The entries of ``kind`` whose pattern may match the call: by its last name, then
        those naming every function of a module it is in (``torch.*`` for ``torch.cat``)."""
        for spec_kind, spec, pattern in self._by_name.get(call.last_name or "", ()):
            if spec_kind == kind:
                yield spec, pattern
        qualname = call.qualname
        if qualname is not None and kind in self._by_prefix:
            for spec, pattern in self._by_prefix[kind]:
                if qualname.startswith(pattern.prefix or ""):
                    yield spec, pattern

    def is_users(self, spec: object) -> bool:
        """Declared by the project (its ``[tool.bufferlint]`` or its own rule packs), not
        shipped with bufferlint: the user's word wins over the tree's own definition."""
        origin = getattr(spec, "origin", "")
        return bool(origin) and not origin.startswith(self._builtin_prefix)

    def names_class(self, qualname: str) -> bool:
        """Does some pack pattern name a method of the class ``qualname``
        (``concurrent.futures.ThreadPoolExecutor.map``)?"""
        if self._classes is None:
            self._classes = frozenset(
                pattern.qualname.rpartition(".")[0]
                for entries in self._by_name.values() for _, _, pattern in entries
                if pattern.qualname and pattern.qualname.count(".") >= 2
            )
        return qualname in self._classes

    def knows_method(self, name: str) -> bool:
        """Is ``name`` a method some pack pattern names (``.clone``, ``Executor.submit``)?"""
        known = self._methods.get(name)
        if known is None:
            known = self._methods[name] = any(
                pattern.method == name or (pattern.qualname and pattern.qualname.count(".") >= 2)
                for _, _, pattern in self._by_name.get(name, ())
            )
        return known

    def names(self, call: CallShape) -> bool:
        """Does any pattern name the called function or method? (Most calls: no, and then
        no kind of pattern needs to be tried.)"""
        if call.last_name in self._by_name:
            return True
        qualname = call.qualname
        return qualname is not None and any(
            qualname.startswith(p.prefix or "") for entries in self._by_prefix.values() for _, p in entries)

    def match(self, kind: str, call: CallShape, contexts: frozenset = frozenset()):
        """The first spec of ``kind`` whose pattern matches the call, else None.
        A sink declared ``within`` a context only matches inside one (``contexts``)."""
        return next(self.matches(kind, call, contexts), None)

    def matches(self, kind: str, call: CallShape, contexts: frozenset = frozenset()) -> Iterator:
        """Every spec of ``kind`` whose pattern matches the call, in the packs' order."""
        if call.last_name is None:
            return
        for spec, pattern in self._candidates(kind, call):
            if not self._matches(pattern, spec, call, _mode(kind, spec)):
                continue
            within = getattr(spec, "within", ())
            if within and not any(str(w) in contexts for w in within):
                continue
            yield spec

    def constructions(self, call: CallShape) -> list:
        """The ``owned-if`` conditions (``built-by``) that name this call as what builds a
        producer: what it passes is what the producer's later calls are judged by."""
        name = call.last_name
        if name is None:
            return []
        return [cond for kind, cond, pattern in self._by_name.get(name, ())
                if kind == "constructions" and self._matches(pattern, cond, call)]

    def attribute_source(self, attr: str, classes: frozenset):
        """The source whose ``attribute`` names ``attr`` on one of these classes, else None."""
        for owner, spec in self._attributes.get(attr, ()):
            if owner in classes:
                return spec
        return None

    def context_of(self, call: CallShape) -> str | None:
        """The ``within`` pattern a ``with`` item's call matches (a CUDA stream context)."""
        for spec in self.vocab.sinks:
            for pattern in spec.within:
                if self._matches(pattern, spec, call):
                    return str(pattern)
        return None

    def pattern_of(self, kind: str, spec: object, call: CallShape) -> CallPattern | None:
        """Which of ``spec``'s patterns the call matches (for the words of its trace)."""
        for pattern in getattr(spec, "calls", ()):
            named = pattern.last_name == call.last_name or pattern.prefix is not None
            if named and self._matches(pattern, spec, call, _mode(kind, spec)):
                return pattern
        return None

    def _matches(self, pattern: CallPattern, spec: object, call: CallShape, mode: str = SURE) -> bool:
        """Whether the call's arguments satisfy the pattern's conditions, in ``mode``:
        ``SURE``, they must hold for sure (what cleans or settles); ``MAY``, an argument that
        is not a constant may satisfy any (sinks: a ``non_blocking=flag`` copy may be
        asynchronous); ``HAZARD``, a source that makes a hazard (a copy in flight): a flag that
        is not a constant may be on, a parameter passed on is what each caller passes (the
        source makes the copy conditional on it: ``Borrow.when``), and a device that is not
        known otherwise is taken as the accelerator's (see docs/architecture.md)."""
        for condition in pattern.required_kwargs:
            if condition.length:
                if call.length(condition.key, condition.position) != condition.value:
                    return False
                continue
            status, value = call.argument(condition.key, condition.position)
            if status == "absent":
                if not condition.optional:
                    return False
            elif status in ("unknown", "parameter"):
                if mode == MAY or (mode == HAZARD and (isinstance(condition.value, bool) or status == "parameter")):
                    continue  # a flag that is not known may be on; a parameter is its callers' to decide
                if status == "parameter" and _by_default(condition, value):
                    continue  # ``def keep(w, dev=torch.device("cuda")): w.to(dev)``: judged by its default
                if status == "parameter" and _declared_accelerator(condition, call.declared(condition.key, condition.position)):
                    continue  # ``def keep(w, dev: torch.device): w.to(dev)``: the accelerator's
                return False
            elif not condition.accepts(value):
                return False
        if pattern.method is not None:
            return call.method == pattern.method
        if call.qualname is not None:
            prefix = pattern.prefix
            return call.qualname == pattern.qualname if prefix is None else call.qualname.startswith(prefix)
        if call.method is None:
            return False
        owner, _, method = pattern.name.rpartition(".")
        if method != call.method:
            return False
        if call.receiver_types:
            return owner in call.receiver_types
        return bool(getattr(spec, "unknown_receiver", False))


def by_construction(spec: object) -> bool:
    """Is a source judged only by what built its receiver (every ``owned-if`` a ``built-by``),
    a copy to hand out now (no ``until``, no ``fills``)?"""
    conditions = getattr(spec, "owned_if", ())
    return bool(conditions) and all(c.built_by is not None for c in conditions) \
        and not getattr(spec, "until", "") and not getattr(spec, "fills", "")


def _by_default(condition, value: object) -> bool:
    """A pattern (string) condition on a parameter of the calling function passed on, whose
    default it accepts (``device@0='cuda*'`` of ``dev=torch.device("cuda")``): the function
    is judged by its default there, as a device-to-host copy's device is (``conditions.
    holds_by_default``). A caller passing another value is not told apart (docs/architecture.md)."""
    if not (isinstance(condition.value, str) and isinstance(value, tuple) and len(value) == 3):
        return False
    _, known, default = value
    return bool(known) and condition.accepts(default)


# The types a device argument is declared with (an annotation): a device, which one not known.
DEVICE_TYPES = frozenset({"torch.device"})


def _declared_accelerator(condition, declared: frozenset) -> bool:
    """A pattern (string) condition on a device that accepts the accelerator's (``device@0=
    'cuda*'``), and a parameter passed on, not known but declared a device (``dev:
    torch.device``): a device not known is taken as the accelerator's, as a device-to-host
    copy's is (``HAZARD``), so ``w.to(dev)`` is a copy to the device, not the tensor itself (a
    ``torch.dtype``, a tensor or an unannotated value may be a conversion in place: still a
    maybe-view). Not a field (``self.device = torch.device("cpu")`` is declared a device
    too, and the host's)."""
    return isinstance(condition.value, str) and bool(declared & DEVICE_TYPES) and condition.accepts("cuda")


def _mode(kind: str, spec: object) -> str:
    if kind == "sinks":
        return MAY
    if kind == "sources" and getattr(spec, "until", None):
        return HAZARD
    if kind == "pinned-allocations":  # a flag not known may pin: the hazard's side
        return HAZARD
    return SURE


def marker_tags(vocab: Vocabulary, marker: str) -> tuple:
    """A check of ``marker`` proves clean the values of the kinds that name it; a marker no
    kind names (top-level ``markers``) speaks for every kind (``None``)."""
    kinds = tuple(sorted(name for name, kind in vocab.kinds.items() if marker in kind.markers))
    return kinds or (None,)
