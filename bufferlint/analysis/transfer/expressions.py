"""Expression evaluation: what each kind of expression evaluates to in the abstract domain.
Binding targets is ``assign.Assignment``'s job, calls are ``calls.CallResolver``'s; both
evaluate their parts through the evaluator that owns them."""

from __future__ import annotations

import ast
from collections.abc import Callable

from bufferlint.analysis.domain.conditions import ParamTest, captured_variable
from bufferlint.analysis.domain.state import LOOP_TURN, State, join_states
from bufferlint.analysis.domain.limits import Limit
from bufferlint.analysis.domain.values import (
    EMPTY,
    Field,
    ParamRef,
    Preset,
    Cond,
    Value,
    checked,
    collection,
    const,
    container,
    deep_leaves,
    evolve,
    index,
    iterate,
    join,
    join_all,
    map_leaves,
    of_object,
    pinned_buffer,
    view_of,
)
from bufferlint.analysis.frontend.constants import static_constant
from bufferlint.analysis.frontend.index import FunctionInfo, PartialBinding, dotted_name, generator_context, globals_owner, is_property
from bufferlint.analysis.frontend.syntax import holder_name, short, walk
from bufferlint.analysis.transfer.assign import Assignment
from bufferlint.analysis.transfer.chosen import chosen_call
from bufferlint.analysis.transfer.produced import borrowed_from
from bufferlint.analysis.transfer.call_site import Args
from bufferlint.analysis.transfer.call_project import property_result
from bufferlint.analysis.transfer.calls import CallResolver
from bufferlint.analysis.transfer.comprehensions import Comprehensions
from bufferlint.analysis.transfer.effects import Effects, refills_not_taken
from bufferlint.analysis.transfer.facts import FunctionFacts
from bufferlint.analysis.transfer.frame import Frame
from bufferlint.analysis.transfer.keyword_maps import display_keys, without_keys
from bufferlint.analysis.transfer.refine import parameter_compared, parameter_test, refine
from bufferlint.analysis.transfer.registries import registered_handlers, registered_under
from bufferlint.analysis.transfer.rotation import picks_in_turn
from bufferlint.analysis.transfer import records
from bufferlint.analysis.transfer.stores import Stores

_LITERALS = {"True": True, "False": False, "None": None}


# Comparisons that compare values element by element (a host read of a tensor or array).
_ELEMENTWISE = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _text(node: ast.expr, limit: int = 40) -> str:
    """How a finding names an expression that reads a tensor (``host + 1``), cut short."""
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# The language's buffers whose slices are copies (a memoryview's, an array's are views).
COPIED_BY_SLICING = frozenset({"builtins.bytearray", "builtins.bytes"})


# Annotations from these modules name no class a pack or the project defines (``Iterator[T]``,
# ``list[T]``, ``Callable[..., T]``): no declared type.
_NO_CLASS = ("builtins.", "typing.", "typing_extensions.", "collections.abc.")
# ... except typing's file classes, which are the interface of the files a function is given
# (``out: BinaryIO``: its ``write`` reads the bytes now, pack ``host-reads``).
_TYPING_CLASSES = frozenset({"typing.BinaryIO", "typing.IO", "typing.TextIO"})


class ExpressionEvaluator:
    """Evaluates expressions in the frame's current state. ``recorded``, when a dict, gets
    the value of every node evaluated (a branch test's parts, for its refinement)."""

    def __init__(
        self,
        frame: Frame,
        facts: FunctionFacts,
        effects: Effects,
        stores: Stores,
        apply: Callable[[object], None],
    ) -> None:
        self.frame = frame
        self.facts = facts
        self.effects = effects
        self.stores = stores
        self.info = frame.info
        self.module = frame.module
        self.program = frame.program
        self.vocab = frame.vocab
        self.recorded: dict[int, Value] | None = None
        self.assignment = Assignment(frame, stores, effects, self.eval, self.lookup)
        self.assign = self.assignment.assign
        self.calls = CallResolver(frame, stores, self.eval, self.eval_arguments, apply)
        self.comprehensions = Comprehensions(frame, facts, effects, self.eval, self.eval_recorded, self.assign,
                                             self.eval_iterable)

    def unlink(self) -> None:
        """Drop the parts that refer back to this evaluator (and, through ``apply``, to the
        interpreter) once the analysis is done: analyses run with the cyclic collector
        paused (``bufferlint.gcpause``), so what one leaves behind must be acyclic for
        reference counting to free it."""
        del self.assignment, self.assign, self.calls, self.comprehensions

    def eval(self, node: ast.expr | None) -> Value:
        if node is None or self.frame.st is None:
            return EMPTY
        method = _EXPRESSIONS.get(type(node))
        if method is not None:
            value = method(self, node)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child)
            value = EMPTY
        if self.recorded is not None:
            self.recorded[id(node)] = value
        return value

    def eval_recorded(self, node: ast.expr) -> tuple[Value, dict[int, Value]]:
        """Evaluate a test once, keeping the values of its parts for the branch refinement."""
        outer = self.recorded
        self.recorded = recorded = outer if outer is not None else {}
        try:
            return self.eval(node), recorded
        finally:
            self.recorded = outer

    def eval_fresh(self, node: ast.expr) -> tuple[Value, dict[int, Value]]:
        """Evaluate ``node`` keeping the values of its parts apart from any outer recording."""
        outer, self.recorded = self.recorded, {}
        try:
            return self.eval(node), self.recorded
        finally:
            self.recorded = outer

    def eval_arguments(self, node: ast.Call) -> Args:
        """A call's arguments, with what each argument expression (and its parts) evaluated
        to: which one carries a borrowed value, for the finding's subject."""
        outer = self.recorded
        self.recorded = values = outer if outer is not None else {}
        positional: list[tuple[Value, bool]] = []
        keywords: list[tuple[str | None, Value]] = []
        try:
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    # ``f(*stream)`` takes every element before the call (a tuple of them)
                    inner = self.eval(arg.value)
                    self.effects.materialize(node, inner, f"{dotted_name(node.func) or short(node.func)}(*...)")
                    positional.append((inner, True))
                else:
                    positional.append((self.eval(arg), False))
            for kw in node.keywords:
                keywords.append((kw.arg, self.eval(kw.value)))
        finally:
            self.recorded = outer
        return Args(positional, keywords, values, node)

    # -- names -------------------------------------------------------------------------------

    def lookup(self, name: str) -> Value:
        if name in self.info.local_defs:
            return Value(ref=self.info.local_defs[name], not_none=True)
        outer = self.info.outer
        while outer is not None:
            if name in outer.local_defs:
                return Value(ref=outer.local_defs[name], not_none=True)
            if name in outer.params or name in outer.assigned:
                # a closure variable: some object of the enclosing call, unknown here; of
                # the direct enclosing function's, which one (its conditions are decided
                # by a call made inside that function's call)
                captured = self.info.captured
                if outer is not self.info.outer or name not in captured:
                    return EMPTY
                return self.receiver_class(captured_variable(captured.index(name)), outer, name)
            outer = outer.outer
        module = self.module
        project = self.program.index
        if name in module.globals:
            qualname = module.globals[name]
            if qualname in project.classes:
                return Value(ref=qualname, classes=frozenset({(qualname, frozenset())}), not_none=True)
            return Value(ref=qualname, not_none=True)
        if name in module.imports:
            qualname = project.canonical(module.imports[name])
            known, literal = self.constant(qualname)
            if known:
                return Value(ref=qualname, const=literal, has_const=True)
            value = self.as_class(Value(ref=qualname), qualname)
            if value.classes:
                return value
            return partial_value(project.partial_binding(qualname)) or value
        if name in module.constants:
            return const(module.constants[name])
        if module.bound_names.get(name, (False, ()))[1]:
            return self.as_class(EMPTY, f"{module.name}.{name}")
        if module.partials.get(name) is not None:
            return partial_value(project.partial_binding(f"{module.name}.{name}")) or EMPTY
        if name in module.variables:
            # module state: an object of the class it is built as, if known, and the pinned
            # buffers the module keeps there
            built = module.variable_classes.get(name)
            held = self.program.field_value((globals_owner(module.name),), name)
            record = records.module_record(project, module, name) or records.module_functions(project, module, name)
            if record is not None:
                for part in record.items or ():
                    if part.ref is not None and part.ref not in project.functions:
                        self.facts.record("demand", ("qualname", part.ref))  # the function's module
            return join(join(Value(declared=frozenset({project.canonical(built)})) if built else None, held), record) or EMPTY
        if name in _LITERALS:
            return const(_LITERALS[name])
        return Value(ref=f"builtins.{name}")

    @staticmethod
    def receiver_class(value: Value, outer: FunctionInfo, name: str) -> Value:
        """A closure's view of the enclosing method's receiver (``self`` in a callback defined
        in a method) is an instance of the method's class, as it is in the method: its fields
        (``self.out``, a queue) are what the class keeps there."""
        if outer.binds_receiver and outer.class_qualname and outer.params and outer.params[0] == name:
            return evolve(value, types=frozenset({outer.class_qualname}))
        return value

    def as_class(self, value: Value, qualname: str) -> Value:
        """``value`` (what ``qualname`` names) with the project classes it is: a class, an
        alias of one (the class itself), a tuple of them (a tuple of class values)."""
        named = self.program.index.class_values(qualname)
        if named is None:
            return value
        is_tuple, classes = named
        if is_tuple:
            return container(None, tuple(Value(ref=c, classes=frozenset({(c, frozenset())}), not_none=True) for c in classes))
        return evolve(value, ref=classes[0], classes=frozenset({(classes[0], frozenset())}), not_none=True)

    def static(self, node: ast.expr) -> tuple[bool, object]:
        """``node``'s value if it is known without running anything (a literal, a constant
        of this module or an imported one, a device constructor of those): a parameter's
        default, evaluated where the ``def`` is."""
        return static_constant(node, self._static_name, self._static_callee)

    def _static_name(self, node: ast.expr) -> tuple[bool, object]:
        name = dotted_name(node)
        if name is None:
            return False, None
        head, _, rest = name.partition(".")
        value = self.lookup(head)
        if not rest:
            return value.has_const, value.const
        if value.ref is None or value.leaves:
            return False, None
        return self.constant(self.program.index.canonical(f"{value.ref}.{rest}"))

    def constant(self, qualname: str) -> tuple[bool, object]:
        """A module constant of the project's, or a library's name for a marker that a
        pack's kind lists (``marker-constants``): the library's files are not read."""
        known, literal = self.program.index.constant(qualname)
        return (known, literal) if known else self.vocab.library_constant(qualname)

    def _static_callee(self, node: ast.expr) -> str | None:
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        ref = self.lookup(head).ref
        if ref is None:
            return None
        return self.program.index.canonical(f"{ref}.{rest}" if rest else ref)

    def declared_types(self, annotation: ast.expr | None) -> frozenset:
        """Classes a parameter annotation names (``X``, ``Optional[X]``, ``X | None``, ``"X"``,
        a generic class ``queue.Queue[Item]``; ``typing``'s forms name no class)."""
        if annotation is None:
            return frozenset()
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return frozenset()
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return self.declared_types(annotation.left) | self.declared_types(annotation.right)
        if isinstance(annotation, ast.Subscript):
            outer = dotted_name(annotation.value) or ""
            if outer.rsplit(".", 1)[-1] in ("Optional", "Union"):
                inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
                return frozenset().union(*(self.declared_types(e) for e in inner))
            annotation = annotation.value
        name = dotted_name(annotation) if isinstance(annotation, (ast.Name, ast.Attribute)) else None
        if name:
            head, _, rest = name.partition(".")
            ref = self.lookup(head).ref
            if ref and (not ref.startswith(_NO_CLASS) or ref in _TYPING_CLASSES):
                return frozenset({self.program.index.canonical(f"{ref}.{rest}" if rest else ref)})
        return frozenset()

    def captured(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> Value | None:
        """A closure's captured variables, as a container (the task reads them later), and
        its default values, evaluated now (``def job(src=w.clone())`` captures a copy)."""
        args = node.args
        assigned = {a.arg for a in walk(args) if isinstance(a, ast.arg)}
        values = [self.eval(d) for d in args.defaults + [d for d in args.kw_defaults if d is not None]]
        body = node.body if isinstance(node.body, list) else [node.body]
        st = self.frame.st
        for child in (n for stmt in body for n in walk(stmt)):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id not in assigned:
                value = st.vars.get(child.id) if st is not None else None
                if value is not None and child.id != getattr(node, "name", None):
                    values.append(value)
        values = [v for v in values if not v.is_empty()]
        if not values:
            return None
        return container(join_all(values))

    # -- expressions -------------------------------------------------------------------------

    def expr_Constant(self, node: ast.Constant) -> Value:
        return const(node.value)

    def expr_Name(self, node: ast.Name) -> Value:
        value = self.frame.st.vars.get(node.id)  # type: ignore[union-attr]  # eval checked it
        if value is None:
            return self.lookup(node.id)
        if value.keys is not None and node.id not in self.frame.tables.keyword_maps:
            return without_keys(value)  # a dict read as something else: its keys may change
        return value

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        value = self.attribute(node)
        holder = holder_name(node) if isinstance(node.ctx, ast.Load) else None
        stored = self.effects.stored_futures(holder) if holder else frozenset()
        if stored:  # ``self.pending`` holds the futures stored in it on this path
            # What the field is otherwise stays whole (a socket read as ``self.sock`` is still
            # one when a method that may wait gave the field a stand-in for its futures).
            return evolve(value, pending=value.pending | stored, elems=join(value.elems, Value(pending=stored)))
        return value

    def attribute(self, node: ast.Attribute) -> Value:
        base = self.eval(node.value)
        program, vocab = self.program, self.vocab
        if base.ref is not None and base.classes and not base.leaves:  # ``Reader.supports_key_filter``
            known, literal = program.index.class_constant(base.ref, node.attr)
            if known:  # (a value that may be one of several classes is decided per class: ``class_tests``)
                return const(literal)
        if base.ref is not None and not base.leaves:
            qualname = program.index.canonical(f"{base.ref}.{node.attr}")
            known, literal = self.constant(qualname)
            return Value(ref=qualname, const=literal, has_const=True) if known else Value(ref=qualname)
        if node.attr in vocab.view_attributes:
            return view_of(base, self.frame.step(node, f"`.{node.attr}` is a view of the borrowed value"))
        if node.attr in vocab.markers:
            return Value(cond=Cond(clean_if_false=checked(base, vocab.marker_tags(node.attr))))
        if node.attr in vocab.done_flags and base.pending:  # ``tracker.done``: true once its work is done
            return Value(cond=Cond(settles_if_true=base.pending))
        classes = base.types | base.declared
        if classes:
            source = vocab.attribute_source(node.attr, classes)
            if source is not None:
                return self.borrowed_attribute(node, source)
        project_classes = program.index.classes  # a dict: ``isdisjoint`` would walk all of it
        if not classes and base.fields is not None:  # a record kept in a field (``Stores.kept_shape``)
            part = records.field_of(base, node.attr)
            if part is not None:
                return part
        if any(name in project_classes for name in classes):
            part = records.field_of(base, node.attr)  # ``item.tensor`` of ``Item(name, w)``
            if part is None:  # ``payload.value`` of a parameter ``payload: Payload``, or ``self.value``
                part = records.parameter_field(program.index, base, node.attr,
                                               self.frame.step(node, f"field `.{node.attr}` of the record"))
            if part is not None:
                return join(part, program.field_value(classes, node.attr)) or EMPTY
            declared = program.index.field_types(classes, node.attr)  # `self.pool = MyPool()`
            kept = program.field_value(classes, node.attr)  # what other methods stored there
            if kept is not None:
                kept = of_object(kept, base.objects)  # `self.a.cpu`: the buffer of the object in `self.a`
                self.effects.arrive(kept)
            kept = join(kept, self.property_value(node, base, classes))  # `pool.staging`: its getter's
            held = program.index.field_types(classes, node.attr, elements=True)  # `self.blocks = [Shm(n) ...]`
            if held:
                kept = join(kept, container(Value(declared=held)))
            handlers = program.index.registered_callables(classes, node.attr)  # `bus.add(forward)`
            if handlers:
                kept = join(kept, container(registered_handlers(program.index, handlers)))
            if declared or kept is not None:
                return self.field_object(join(Value(declared=declared), kept) or EMPTY, classes, node.attr)
        if not classes and not vocab.knows_method(node.attr):
            self.deeper_field(node, base)
        if base.leaves or base.types or base.declared or base.alloc:
            # Maybe a bound method (``submit = executor.submit``). One of a borrowed value
            # that the packs know as a method (``w.clone``) holds the value itself.
            holds = base.leaves if vocab.knows_method(node.attr) else frozenset()
            # A method of the object's project classes, bound to it: never None.
            method = bool(classes) and all(program.index.class_method(c, node.attr) for c in sorted(classes))
            return Value(leaves=holds, method=node.attr, bound=base, not_none=method)
        return EMPTY

    def deeper_field(self, node: ast.Attribute, base: Value) -> None:
        """``outer.inner.tensor`` of a record parameter's field a caller filled
        (``Program.field_hot``): a field's field is past the depth followed (one), so what
        the caller put there is lost here; told as a notice, never silently."""
        program, qualname = self.frame.program, self.info.qualname
        followed = records.followed_fields(program, qualname)
        for leaf in base.leaves:
            if isinstance(leaf, ParamRef) and len(leaf.path) == 1 and isinstance(leaf.path[0], Field) \
                    and followed(leaf.index, leaf.path[0].position):
                self.facts.caps.append(Limit(
                    f"{self.info.display}: `.{node.attr}` at line {node.lineno} reads a field of a record parameter's "
                    "field, deeper than the one level followed; findings through it may be missed"
                ))
                return

    def property_value(self, node: ast.Attribute, base: Value, classes: frozenset) -> Value | None:
        """``pool.staging`` where ``staging`` is a ``@property`` of the object's project
        classes: what the getter returns for ``base`` (``call_project.property_result``),
        this function analysed again when the getter's summary changes, as a caller is."""
        index = self.program.index
        found = None
        for name in sorted(classes):
            qualname = index.class_method(name, node.attr) if name in index.classes else None
            getter = index.functions.get(qualname) if qualname is not None else None
            if getter is None or not is_property(getter):
                continue
            self.facts.record("callee", getter.qualname)
            result, effects = property_result(self.frame, node, getter, base)
            for effect in effects:
                self.calls.apply(effect)
            found = join(found, result) if result != EMPTY else found
        return found

    def eval_iterable(self, node: ast.expr) -> Value:
        """What ``for x in <node>`` (a loop's or a comprehension's) iterates."""
        value = self.eval(node)
        if self.frame.st is None or not (value.types or value.declared):
            return value
        return self.project_iterator(node, value)

    def project_iterator(self, node: ast.expr, iterable: Value) -> Value:
        """``for item in counted`` of an object of a project class defining ``__iter__``
        (a wrapper re-yielding what it was built with): the loop iterates what that method
        returns for the object (``call_project.property_result``, the method a getter of no
        arguments); each is analysed, and this function again when its summary changes."""
        index = self.program.index
        for type_name in sorted(iterable.types | iterable.declared):
            method = index.class_method(type_name, "__iter__") if type_name in index.classes else None
            info = index.functions.get(method) if method is not None else None
            if info is None:
                continue
            self.program.activate(info.qualname)
            self.facts.record("callee", info.qualname)
            said = f"iterated by `{info.class_qualname.rsplit('.', 1)[-1] if info.class_qualname else ''}.__iter__`"
            result, effects = property_result(self.frame, node, info, iterable, said)
            for effect in effects:
                self.calls.apply(effect)
            iterable = join(iterable, result)
        return iterable

    def field_object(self, value: Value, classes: frozenset, attr: str) -> Value:
        """``self.a`` holding an object of a project class: which one, when every store
        into the field makes one anew (``ProjectIndex.field_objects``), so that the
        pinned buffers of ``self.a`` and ``self.b`` are not taken for each other's."""
        if not (value.declared or value.types):
            return value
        objects = self.frame.program.index.field_objects(classes, attr)
        return evolve(value, objects=objects) if objects else value

    def borrowed_attribute(self, node: ast.Attribute, source) -> Value:
        """``shm.buf``: an attribute a pack names as a view of a reused buffer."""
        value = borrowed_from(self.frame, node, source, f"{short(node)}")
        self.effects.refresh(value)
        return value

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        value = self.subscript(node)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) and value.part_of is None:
            # ``group = pending[key]``: an element of a local container (no view) lives in
            # it, so what is stored into the element is kept there (``Stores.home_of``), as
            # for ``pending.setdefault(key, [])``
            base = self.frame.st.vars.get(node.value.id) if self.frame.st is not None else None
            if base is not None and not base.leaves and (base.elems is not None or base.types or base.declared):
                value = evolve(value, part_of=node.value.id)
        receiver = self.frame.receiver_name
        if receiver is not None and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Attribute) \
                and any(pinned_buffer(leaf) for leaf in deep_leaves(value)) \
                and picks_in_turn(node, receiver, self.facts.rotating_indices(self.frame.info.node, receiver)):
            self.effects.taken_in_turn(value)  # ``self.bufs[i]``, ``i`` advanced modulo the pool
        return value

    def subscript(self, node: ast.Subscript) -> Value:
        base = self.eval(node.value)
        if isinstance(node.ctx, ast.Load) and isinstance(node.value, (ast.Name, ast.Attribute)):
            self.stores.read_back(node.value, node)
        key = self.eval(node.slice)
        if isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name) and key.has_const:
            # ``Policies.registry["owned"]``: what is registered under that key
            chosen = registered_under(self.program.index, self.eval(node.value.value), node.value.attr, key)
            if chosen is not None:
                return chosen
        classes = base.types or base.declared  # ``self.buf``, a field made by ``bytearray(n)``
        if classes and classes <= COPIED_BY_SLICING:
            return EMPTY  # ``buf[a:b]`` of a bytearray is a new bytearray; ``buf[i]`` an int
        step = self.frame.step(node, "indexed/sliced: a view of the borrowed value")
        region = self.frame.region(node.slice, base)
        if isinstance(node.slice, ast.Slice) or (isinstance(node.slice, ast.Tuple)):
            return join(view_of(base, step, region), container(base.elems, None) if base.elems or base.items else None)
        if key.has_const and isinstance(key.const, int) and not isinstance(key.const, bool):
            return index(base, key.const, step, region)
        return index(base, None, step, region)

    def expr_Tuple(self, node: ast.Tuple | ast.List | ast.Set) -> Value:
        values, starred = [], False
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                starred = True
                inner = self.eval(elt.value)
                self.effects.materialize(node, inner, "[*...]")
                values.append(iterate(inner))
            else:
                values.append(self.eval(elt))
        if isinstance(node, ast.Tuple) and not starred:
            return container(None, tuple(values))
        return collection(join_all(values))

    expr_List = expr_Tuple

    expr_Set = expr_Tuple

    def expr_Dict(self, node: ast.Dict) -> Value:
        values = []
        for key, value in zip(node.keys, node.values):
            if key is not None:
                self.eval(key)
                values.append(self.eval(value))
            else:
                values.append(index(self.eval(value), None))
        result = collection(join_all(values))
        st = self.frame.st
        keys = display_keys(list(node.keys), values, st.assume) if st is not None else None
        return evolve(result, keys=keys) if keys is not None else result

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        values = [self.eval(v) for v in node.values]
        conds = [v.cond or Cond() for v in values]
        cond = both(conds) if isinstance(node.op, ast.And) else either(conds)
        result = join_all(Value(leaves=v.leaves, elems=v.elems, items=v.items, lazy=v.lazy, types=v.types, fields=v.fields) for v in values)
        return Value(leaves=result.leaves, elems=result.elems, items=result.items, lazy=result.lazy, cond=cond,
                     fields=result.fields)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        value = self.eval(node.operand)
        if not isinstance(node.op, ast.Not) and value.leaves:
            self.effects.read_host(node, value, _text(node))
        if isinstance(node.op, ast.Not):
            if value.has_const:
                return const(not value.const)
            tested = parameter_test(node.operand, {id(node.operand): value}, self.frame.defaults)
            if isinstance(value.truth, ParamTest):
                tested = value.truth
            truth = tested.negate() if tested is not None else None
            return Value(cond=value.cond.negate() if value.cond else None, truth=truth)
        return EMPTY

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        left, right = self.eval(node.left), self.eval(node.right)
        for operand in (left, right):  # arithmetic on a host tensor reads it on the host now
            if operand.leaves:  # named only then: unparsing every sum is quadratic in a long one
                self.effects.read_host(node, operand, _text(node))
        if isinstance(node.op, ast.Add) and any(v.elems is not None or v.items is not None for v in (left, right)):
            return container(join(iterate(left), iterate(right)))
        return EMPTY

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.eval(node.left)
        rights = [self.eval(c) for c in node.comparators]
        self.compared_on_host(node, [left, *rights])
        if len(node.ops) == 1 and left.cond is not None and rights[0].has_const and isinstance(rights[0].const, bool):
            positive = isinstance(node.ops[0], (ast.Is, ast.Eq)) == rights[0].const
            return Value(cond=left.cond if positive else left.cond.negate())
        cond = None
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) and left.recorded is not None \
                and left.cond is not None and rights[0].has_const and rights[0].const is None:
            # ``fence is None`` of an event that is None where its copies were never issued
            # (``state._none_or_event``): that work is not in flight where the test is true
            cond = Cond(settles_if_true=left.cond.settles_if_false)
            cond = cond if isinstance(node.ops[0], ast.Is) else cond.negate()
        elif len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) and left.pending:
            if rights[0].has_const and rights[0].const is None:
                # ``tracker is None``: the variable holds no handle, so the work it would stand
                # for was never started on this path (``tracker = None; try: tracker =
                # send(...) finally: if tracker is not None: tracker.wait()``).
                cond = Cond(settles_if_true=left.pending)
                cond = cond if isinstance(node.ops[0], ast.Is) else cond.negate()
        if len(node.ops) == 1:  # ``key_filter is not None``: passed on, a test of the parameter
            truth = parameter_compared(node, {id(node.left): left, id(node.comparators[0]): rights[0]}, self.frame.defaults)
            if truth is not None:
                return Value(truth=truth, cond=cond)
        return Value(cond=cond) if cond is not None else EMPTY

    def compared_on_host(self, node: ast.Compare, operands: list[Value]) -> None:
        """``arr > 0``, ``t == u``: comparing values element by element reads them on the
        host now, as arithmetic does; ``is`` and ``in`` compare identities or look in a
        container, and read no tensor's bytes."""
        if not any(isinstance(op, _ELEMENTWISE) for op in node.ops):
            return
        for operand in operands:
            if operand.leaves:
                self.effects.read_host(node, operand, _text(node))

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        frame = self.frame
        _, tested = self.eval_recorded(node.test)
        before = frame.st
        if before is None:
            return EMPTY
        frame.st = self.branch(refine(before.copy(), node.test, True, tested, frame.defaults, frame.program.index), node.test, True)
        body = _under(self.eval(node.body), frame.st.assume - before.assume) if frame.st is not None else None
        then_state = frame.st
        frame.st = self.branch(refine(before.copy(), node.test, False, tested, frame.defaults, frame.program.index), node.test, False)
        orelse = _under(self.eval(node.orelse), frame.st.assume - before.assume) if frame.st is not None else None
        frame.st = join_states(then_state, frame.st) or before
        return join(body, orelse) or EMPTY

    def branch(self, st: State | None, test: ast.expr, truth: bool) -> State | None:
        """The state ``refine`` left on one way of a branch, without the producers' refills
        that a flag testing the other way rules out (``effects.refills_not_taken``)."""
        return refills_not_taken(st, test, truth, self.facts, self.frame.tables) if st is not None else None

    def expr_NamedExpr(self, node: ast.NamedExpr) -> Value:
        value = self.eval(node.value)
        self.assign(node.target, value, node)
        return value

    def expr_Lambda(self, node: ast.Lambda) -> Value:
        """The function the index made of the lambda (``FunctionInfo.own_lambdas``), as a
        nested ``def`` is: called (a callback), it runs; its captured variables are what a
        task it is handed to reads later."""
        captured = self.captured(node)
        qualname = self.info.lambda_name(node)
        if qualname is None:
            return captured or EMPTY
        return Value(ref=qualname, elems=captured.elems if captured else None, not_none=True)

    def expr_Await(self, node: ast.Await) -> Value:
        """Awaiting waits for the work the awaitable stands for; the submissions whose future
        resolves once they are queued (``Frame.queued_on_await``) stay pending, and the result
        stands for them (``tracker = await sock.send(v, copy=False, track=True)``)."""
        value = self.eval(node.value)
        call = node.value
        if isinstance(call, ast.Call) and (call.lineno, call.col_offset) in self.frame.loop_yields:
            # the loop runs the callbacks scheduled so far before this coroutine resumes
            self.effects.settle_owned_by(Value(alloc=frozenset({LOOP_TURN})))
        queued = value.pending & self.frame.queued_on_await
        self.effects.settle(evolve(value, pending=value.pending - queued) if queued else value)
        return Value(pending=queued, types=value.types) if queued else EMPTY

    def expr_Yield(self, node: ast.Yield) -> Value:
        value = self.eval(node.value) if node.value is not None else EMPTY
        self.effects.hand_back_stale(node.value, value, node)
        self.add_yield(value, node)
        return EMPTY

    def expr_YieldFrom(self, node: ast.YieldFrom) -> Value:
        value = self.eval(node.value)
        self.add_yield(iterate(value), node)
        return EMPTY

    def add_yield(self, value: Value, node: ast.AST) -> None:
        value = self.effects.handed_out(value, yielded=True)
        step = self.frame.step(node, "yielded to the caller")
        value = map_leaves(value, lambda leaf: leaf.with_trace(leaf.trace + (step,)))
        if self.frame.st is not None:
            value = self.facts.handed_back(value, self.frame.st.assume)
        self.facts.yields = join(self.facts.yields, value)
        self.effects.commit_all(step)
        if self.frame.st is not None and generator_context(self.frame.info.node):
            self.facts.yield_synced.append(self.frame.st.synced)
            # a context manager's yield runs the ``with`` block, which may issue device work:
            # what it synchronised before does not cover that (``Summary.synchronizes`` is
            # then whether its exit synchronises)
            self.frame.st.synced, self.frame.st.waits = False, frozenset()

    def expr_ListComp(self, node: ast.ListComp | ast.SetComp) -> Value:
        what = "[... for ...]" if isinstance(node, ast.ListComp) else "{... for ...}"
        return container(self.comprehensions.run(node, [node.elt], keeps=what)[0])

    expr_SetComp = expr_ListComp

    def expr_GeneratorExp(self, node: ast.GeneratorExp) -> Value:
        return container(self.comprehensions.run(node, [node.elt])[0], lazy=True)

    def expr_DictComp(self, node: ast.DictComp) -> Value:
        return container(self.comprehensions.run(node, [node.key, node.value], keeps="{...: ... for ...}")[1])

    def expr_FormattedValue(self, node: ast.FormattedValue) -> Value:
        """``f"{t}"`` formats the tensor's values: a host read."""
        value = self.eval(node.value)
        if node.format_spec is not None:
            self.eval(node.format_spec)
        if value.leaves:
            self.effects.read_host(node, value, "f-string")
        return EMPTY

    def expr_Starred(self, node: ast.Starred) -> Value:
        return iterate(self.eval(node.value))

    def expr_Call(self, node: ast.Call) -> Value:
        st = self.frame.st
        conditional = chosen_call(st, node, self.frame.info.node, self.frame.tables.chosen_calls) if st is not None and isinstance(node.func, ast.Name) else None
        if conditional is not None:  # ``run(...)`` of ``run = pool.submit if offload(w) else run_inline``
            return self.eval(conditional)
        unrolled = self.any_over_constants(node)
        return unrolled if unrolled is not None else self.calls.evaluate(node)

    def any_over_constants(self, node: ast.Call) -> Value | None:
        """``any(getattr(w, m, False) for m in MARKERS)`` over a constant tuple is the ``or``
        of its elements (``all``: the ``and``), so a marker check written this way cleans
        what ``getattr(w, A, False) or getattr(w, B, False)`` would. Only elements that call
        nothing but ``getattr``/``hasattr``/``isinstance`` are unrolled (evaluating them once
        per constant does nothing else); None for any other call."""
        func = node.func
        if not (isinstance(func, ast.Name) and func.id in ("any", "all") and len(node.args) == 1 and not node.keywords):
            return None
        gen = node.args[0]
        if not (isinstance(gen, ast.GeneratorExp) and len(gen.generators) == 1):
            return None
        loop = gen.generators[0]
        if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name) or self.lookup(func.id).ref != f"builtins.{func.id}":
            return None
        name = loop.target.id
        if any(isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in PURE_CHECKS | {name})
               for n in walk(gen.elt)):
            return None
        names = self.eval(loop.iter)
        items = _unrolled_items(names, calls_target=any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                                                        and n.func.id == name for n in walk(gen.elt)))
        if items is None:
            return None
        st = self.frame.st
        if st is None:
            return EMPTY
        before = st.vars.get(name)
        conds = []
        for item in items:
            st.vars[name] = item
            conds.append(self.eval(gen.elt).cond or Cond())
        if before is None:
            st.vars.pop(name, None)
        else:
            st.vars[name] = before
        return Value(cond=either(conds) if func.id == "any" else both(conds))

def _unrolled_items(names: Value, calls_target: bool) -> list[Value] | None:
    """What an ``any``/``all`` is unrolled over: the constants of a constant tuple, or, when the
    element calls the loop's name (``all(check(w) for check in CHECKS)``), the functions of a
    tuple of them (lambdas or functions, each one's summary deciding what its call tells); None
    for anything else, or more than ``MAX_UNROLLED``."""
    if calls_target:
        items = names.items
        if items is None or not 0 < len(items) <= MAX_UNROLLED or any(item.ref is None or item.leaves for item in items):
            return None
        return list(items)
    if not (names.has_const and isinstance(names.const, tuple) and 0 < len(names.const) <= MAX_UNROLLED):
        return None
    return [const(item) for item in names.const]


PURE_CHECKS = frozenset({"getattr", "hasattr", "isinstance"})  # calls an unrolled ``any`` element may make
MAX_UNROLLED = 16  # constants an ``any``/``all`` is unrolled over (more: evaluated as a plain call)


def both(conds: list[Cond]) -> Cond:
    """What ``a and b`` tells: true when both are (the facts of either), false when one is."""
    return Cond(frozenset().union(*(c.clean_if_true for c in conds)), frozenset.intersection(*(c.clean_if_false for c in conds)))


def either(conds: list[Cond]) -> Cond:
    """What ``a or b`` tells: false when both are (the facts of either), true when one is."""
    return Cond(frozenset.intersection(*(c.clean_if_true for c in conds)), frozenset().union(*(c.clean_if_false for c in conds)))


# The evaluator of each expression kind (by exact node type: ``ast`` has no subclasses).
_EXPRESSIONS: dict[type, Callable[[ExpressionEvaluator, ast.expr], Value]] = {
    getattr(ast, name[len("expr_"):]): method
    for name, method in vars(ExpressionEvaluator).items()
    if name.startswith("expr_")
}


def _under(value: Value, tests: frozenset) -> Value:
    """A branch's value in a conditional expression: what it holds is there only under the
    tests of the parameters the branch assumed (``t if share else t.clone()`` holds ``t``
    only when ``share`` is true), as if each branch were returned on its own path."""
    if not tests:
        return value
    return map_leaves(value, lambda leaf: leaf.under(leaf.when | tests))


def partial_value(bound: PartialBinding | None) -> Value | None:
    """A module's ``NAME = functools.partial(target, ...)`` as a value (``index.partial_binding``):
    the target with its preset arguments, as a local partial is (``call_packs.on_bind``), so a
    call of the name is a call of the target; an argument not known is an unknown value."""
    if bound is None:
        return None
    target, positional, keywords = bound

    def argument(known_literal) -> Value:
        known, literal = known_literal
        return const(literal) if known else EMPTY

    preset = Preset(tuple(argument(a) for a in positional), tuple((k, argument(a)) for k, a in keywords))
    return Value(ref=target, preset=preset, not_none=True)
