"""Conditions on what a caller passes: the flags and parameter defaults a summary's facts
depend on.

A fact of a summary may hold only when a parameter has some value: a producer that copies
unless told not to (``if to_cpu or clone_tensors: yield t.clone() else: yield t``) hands
out a borrowed view only when both flags are false; a helper that submits only ``if
use_pool:`` reaches the pool only when its caller turns it on; a device copy lands on the
host only when the device passed is one. Each such fact carries its ``ParamTest``s (a
conjunction), and every call decides them with what it passes: a constant decides, a
parameter of the caller passed on unchanged becomes the same test of the caller's
parameter (with the caller's default), nothing passed is the parameter's default, and
anything else is not known. A test not known is taken as may-hold (the hazard may
happen), except a device's: a device not known is the accelerator's (``MATCHES``).

The tests come from the function's own branches (``refine``: truthiness, ``not``, the
operands of ``and``/``or`` where they must all agree, ``is None``, ``==`` a constant) and
from the packs' argument conditions on a parameter passed on (``call_packs``). A fact keeps
at most ``MAX_CONDITIONS`` of them (``bounded``, where a summary's fact is made); dropping one only makes the fact hold
more often, and the analysis reports that it did (a notice).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterable, Sequence

from bufferlint.analysis.domain.values import ParamRef, Value, uncleared
from bufferlint.analysis.frontend.constants import DeviceObject
from bufferlint.packs import ArgCondition

# The tests a branch can make of a parameter, and the packs' argument conditions.
TRUTHY = "truthy"
FALSY = "falsy"
IS = "is"  # ``is`` a singleton: None, True, False
IS_NOT = "is not"
EQ = "=="
NE = "!="
MATCHES = "matches"  # a pack argument condition (``device@0='cpu*'``)
# A pack flag condition (``non_blocking=True``) on a parameter passed on: the truth of what
# the caller passes equals ``operand``'s. A call decides it (its default where it passes
# nothing); the function's own judgement of its own copy does not (``holds_by_default``).
FLAG = "flag"
# The receiver is an instance of a project class (``operand``, its qualname): what a method's
# ``self.m()`` reaches in a subclass's override holds only then (``call_project.targets_typed``),
# and a call on an object whose class is known decides it (``may_be_instance``).
INSTANCE = "isinstance"

# A field of the object passed (``operand``: ``(attr, constant)``): the object's constructor
# left that constant in ``obj.<attr>`` (``frontend.construction``). Only guard facts use it
# (a guard object told its marker's name when built), decided by ``surely_passed``.
FIELD = "field"

# The truth of a field of the object passed, as the function reads it (``operand``: ``(attr,
# truth)``): ``non_blocking=self.overlap`` and ``if not self.overlap:`` test the same thing,
# so on that branch the copy was blocking (``refuted``). The field is taken to keep its value
# through the call, as a flag does. A call knows nothing of the field: it may hold there,
# unless the caller passes its own parameter on (the test is then of the caller's).
ATTR = "attr"

# The callable passed (a guard handed to a shared loop: ``if decide(w):`` of a parameter
# ``decide``, or held in a field of a record parameter: ``if plan.overlap(w):``) approves
# what it is asked about, at the argument positions ``operand`` names (``approves_operand``:
# the positions, the path to the callable in the parameter, and that path as the code
# writes it). Each call passing a project function decides it by that function's guard facts
# (``CallEdge.verdicts``): a guard rejecting marked values there rules the fact out, one
# approving them decides it (``DECIDED_BY``: its guard finding stands for the fact's finding).
APPROVES = "approves"

# A record parameter's field compared with None (``operand``: ``(position, attr, is_none)``,
# the field's ``values.Field`` position): ``if out.ready is not None: out.ready.synchronize()``
# waits only where the caller built the record with an object there. A call decides it by the
# part it built the record with (``_field_is_none``); the caller's own parameter passed on
# gives the same test of it; anything else may hold.
FIELD_NONE = "field is None"

IN = "in"  # membership in a module constant's tuple (``device not in _CPU_DEVICES``)
NOT_IN = "not in"

NEGATED = {TRUTHY: FALSY, FALSY: TRUTHY, IS: IS_NOT, IS_NOT: IS, EQ: NE, NE: EQ, IN: NOT_IN, NOT_IN: IN}

# Where the indices of a nested function's closure variables begin (``FunctionInfo.captured``:
# the ``k``-th is ``CAPTURED + k``), far above any parameter's. Inside its analysis such a
# variable is ``captured_variable``: no object known, but a test of it, or a pack condition
# on it (``tensor.to(device, ...)`` with the enclosing call's ``device``), is a condition
# like a parameter's, which a call made inside the enclosing call decides with that call's
# value of the variable (``call_project._captured_here``); any other call leaves it not known.
CAPTURED = 1 << 16

# A class's ancestors, itself first (``IndexView.class_ancestors``): what decides an
# ``INSTANCE`` test at a call; without it such a test may hold.
Ancestors = Callable[[str], Sequence[str]]

# The most conditions one fact keeps: nested branches on many flags, or conditions composed
# through long chains of helpers, stay bounded (the summary's lattice stays finite).
MAX_CONDITIONS = 8


@dataclass(frozen=True)
class ParamTest:
    """A test of what the caller passes for parameter ``param`` (``operand``: the constant
    compared with, or a pack condition's expected value), with the parameter's default
    when one is known (``default_known``), which decides it at a call that passes nothing."""

    param: int
    test: str
    operand: object = None
    default_known: bool = False
    default: object = None

    def decide(self, value: object) -> bool:
        """Does the test hold for this constant argument?"""
        test, operand = self.test, self.operand
        if test == MATCHES:
            return ArgCondition("", operand).accepts(value)
        if test == FIELD:
            expected = field_operand(self)[1]
            return value == expected and type(value) is type(expected)
        if test == INSTANCE:  # a literal is no instance of a project class
            return False
        if test in (ATTR, APPROVES, FIELD_NONE):  # a literal's field is not read here; a literal is no guard
            return True
        if test in (IN, NOT_IN):
            member = membership(value, operand)
            return member is None or member == (test == IN)
        if test in (TRUTHY, FALSY):
            return bool(value) == (test == TRUTHY)
        if test == FLAG:
            return bool(value) == bool(operand)
        if test in (IS, IS_NOT):
            return (value is operand or (value == operand and type(value) is type(operand))) == (test == IS)
        try:
            return bool(value == operand) == (test == EQ)
        except Exception:  # a constant whose comparison raises decides nothing: may hold
            return True

    @property
    def unknown_holds(self) -> bool:
        """May the test hold for an argument not known? Yes, except a device's: a device not
        known is the accelerator's, where a pack's host-device condition does not hold."""
        return self.test != MATCHES

    def by_default(self) -> bool:
        """Does the test hold at a call that leaves the parameter to its default?"""
        return self.decide(self.default) if self.default_known else self.unknown_holds

    def on(self, param: int, defaults: dict[int, object]) -> "ParamTest":
        """The same test of the caller's parameter ``param``, passed on unchanged."""
        return ParamTest(param, self.test, self.operand, param in defaults, defaults.get(param))

    def negate(self) -> "ParamTest | None":
        if self.test == ATTR:
            attr, truth = attr_operand(self)
            return replace(self, operand=(attr, not truth))
        if self.test == FIELD_NONE:
            position, attr, none = field_none_operand(self)
            return replace(self, operand=(position, attr, not none))
        test = NEGATED.get(self.test)
        return None if test is None else ParamTest(self.param, test, self.operand, self.default_known, self.default)

    def describe(self, name: str) -> str:
        """The test as the code would write it (``clone_tensors is None``), for traces."""
        if self.test == TRUTHY:
            return name
        if self.test == FALSY:
            return f"not {name}"
        if self.test == MATCHES:
            return f"{name} matching {self.operand!r}"
        if self.test == FLAG:
            return name if self.operand else f"not {name}"
        if self.test == INSTANCE:
            return f"{name} an instance of `{self.operand}`"
        if self.test == APPROVES:
            return f"`{name}{approves_operand(self)[2]}(...)` approving it"
        if self.test == FIELD:
            attr, expected = field_operand(self)
            return f"{name}.{attr} == {expected!r}"
        if self.test == ATTR:
            attr, truth = attr_operand(self)
            return f"{name}.{attr}" if truth else f"not {name}.{attr}"
        if self.test == FIELD_NONE:
            _, attr, none = field_none_operand(self)
            return f"{name}.{attr} is {'' if none else 'not '}None"
        return f"{name} {self.test} {self.operand!r}"


def membership(value: object, members: object) -> bool | None:
    """Is the constant ``value`` one of ``members`` (a folded tuple)? None when that is not
    known: a device's string stands for ``"cpu"`` and for ``torch.device("cpu")`` alike
    (``constants.static_constant`` folds both to the string), which torch never finds equal,
    so a string is surely in the tuple only when the tuple holds it in both forms, and surely
    out only when it holds it in neither."""
    if not isinstance(members, tuple):
        return None
    if not isinstance(value, str):
        plain = [m for m in members if not isinstance(m, DeviceObject)]
        return any(m == value for m in plain)  # as Python compares them (``1 in (True,)``)
    as_string = value in [m for m in members if isinstance(m, str)]
    as_device = value in [m.device for m in members if isinstance(m, DeviceObject)]
    if as_string and as_device:
        return True
    if not as_string and not as_device:
        return False
    return None


def sort_key(test: ParamTest) -> tuple:
    return (test.param, test.test, repr(test.operand))


def bounded(tests: frozenset) -> tuple[frozenset, bool]:
    """At most ``MAX_CONDITIONS`` of these tests, and whether some were dropped (the first
    by parameter and test are kept: the same whatever the order they were met in)."""
    if len(tests) <= MAX_CONDITIONS:
        return tests, False
    return frozenset(sorted(tests, key=sort_key)[:MAX_CONDITIONS]), True


def exact_parameter(value: Value | None) -> int | None:
    """The index of the parameter ``value`` is, as the caller passed it, on every path (not a
    part or a view of it, not reassigned on some path: ``Value.param``)."""
    if value is None or value.param is None or value.has_const:
        return None
    if not value.leaves:  # a closure variable (``captured_variable``)
        return value.param if value.param >= CAPTURED else None
    for leaf in value.leaves:
        if not (isinstance(leaf, ParamRef) and leaf.index == value.param and uncleared(leaf.path) == ()):
            return None
    return value.param


def captured_variable(position: int) -> Value:
    """The value of a nested function's ``position``-th closure variable inside its own
    analysis: nothing known of the object, only which variable it is (``CAPTURED``)."""
    return Value(param=CAPTURED + position)


def decide_at_call(tests: Iterable[ParamTest], bound: dict[int, Value], defaults: dict[int, object],
                   ancestors: Ancestors | None = None) -> frozenset | None:
    """A callee's conditions at one call (``bound``: its arguments by parameter): None when
    the arguments rule the fact out, else the conditions left, on the caller's own
    parameters passed on (``defaults``: the caller's parameters' defaults). ``ancestors``
    decides the ``INSTANCE`` tests of an argument whose class is known."""
    left = []
    for test in tests:
        actual = bound.get(test.param)
        if actual is None:
            if not test.by_default():
                return None
        elif test.test == INSTANCE and not may_be_instance(actual, str(test.operand), ancestors):
            return None  # an object of a class that is none of the override's
        elif test.test == FIELD_NONE and _field_is_none(test, actual) is not None:
            if not _field_is_none(test, actual):
                return None
        elif actual.has_const:
            if not test.decide(actual.const):
                return None
        elif actual.not_none and test.test in (IS, IS_NOT) and test.operand is None:
            if test.test == IS:  # a function, a class, a bound method: never None
                return None
        else:
            passed_on = exact_parameter(actual)
            composed = _truth_passed_on(test, actual)
            if passed_on is not None:
                left.append(test.on(passed_on, defaults))
            elif composed is not None:
                left.append(composed)
            elif not test.unknown_holds:
                return None
    return frozenset(left)


def _field_is_none(test: ParamTest, actual: Value) -> bool | None:
    """Does a ``FIELD_NONE`` test hold for the record ``actual`` the call built: the constant
    at that position, or an object surely not None there (None: not known)."""
    position, _, none = field_none_operand(test)
    items = actual.items if actual.fields is not None else None
    part = items[position] if items is not None and position < len(items) else None
    if part is None:
        return None
    if part.has_const:
        return (part.const is None) == none
    if part.not_none:
        return not none
    return None


def surely_passed(tests: frozenset, bound: dict[int, Value],
                  field: Callable[[Value, str], "tuple[bool, object]"] | None = None) -> bool:
    """Do this call's arguments surely pass every test (a constant that passes it, or a
    default that does where nothing is passed; for a ``FIELD`` test, the constant ``field``
    says the object passed holds)? A guard told the marker's name decides nothing where the
    name is not known."""
    for test in tests:
        actual = bound.get(test.param)
        if actual is None:
            if not (test.default_known and test.decide(test.default)):
                return False
            continue
        if test.test == FIELD:
            known, value = field(actual, field_operand(test)[0]) if field is not None else (False, None)
        else:
            known, value = actual.has_const, actual.const
        if not (known and test.decide(value)):
            return False
    return True


def field_none_operand(test: ParamTest) -> tuple[int, str, bool]:
    """A ``FIELD_NONE`` test's field position, attribute and whether it wants None there."""
    operand = test.operand
    assert isinstance(operand, tuple)
    return int(operand[0]), str(operand[1]), bool(operand[2])


def attr_operand(test: ParamTest) -> tuple[str, bool]:
    """An ``ATTR`` test's attribute and the truth it wants there."""
    operand = test.operand
    assert isinstance(operand, tuple)
    return str(operand[0]), bool(operand[1])


def _truth_wanted(test: ParamTest) -> tuple[object, bool] | None:
    """What a test says of the truth of one thing (a parameter, or a field of one): (that
    thing, the truth), or None for a test that says more (``== 3``) or else."""
    if test.test in (TRUTHY, FALSY):
        return test.param, test.test == TRUTHY
    if test.test == FLAG:
        return test.param, bool(test.operand)
    if test.test == ATTR:
        attr, truth = attr_operand(test)
        return (test.param, attr), truth
    return None


def refuted(tests: Iterable[ParamTest], assumed: Iterable[ParamTest]) -> bool:
    """Do the path's assumptions rule out one of these tests? ``host = t.to("cpu",
    non_blocking=flag)`` then ``if not flag: return host.tolist()``: on that branch the flag
    is false, so the copy was blocking."""
    wanted: dict[object, bool] = {}
    for test in assumed:
        found = _truth_wanted(test)
        if found is not None:
            wanted[found[0]] = found[1]
    for test in tests:
        found = _truth_wanted(test)
        if found is not None and wanted.get(found[0], found[1]) != found[1]:
            return True
    return False


def approves_operand(test: ParamTest) -> tuple[tuple[int, ...], tuple, str]:
    """An ``APPROVES`` test's argument positions asked about, the access path from the
    parameter to the callable (``()``, or a record's ``Field``), and that path as written
    (``".overlap"``)."""
    operand = test.operand
    assert isinstance(operand, tuple)
    return tuple(operand[0]), tuple(operand[1]), str(operand[2])


def field_operand(test: ParamTest) -> tuple[str, object]:
    """A ``FIELD`` test's attribute and the constant it wants there."""
    operand = test.operand
    assert isinstance(operand, tuple)
    return str(operand[0]), operand[1]


def fails_by_default(tests: frozenset) -> bool:
    """Does some test surely fail where the caller leaves its parameter (or the object's
    constructor its field) to the default? (A guard whose fallback marker name is wrong.)"""
    return any(test.default_known and not test.decide(test.default) for test in tests)


def may_be_instance(value: Value, owner: str, ancestors: Ancestors | None) -> bool:
    """May ``value`` be an instance of the project class ``owner``? Not when every class it
    is known to be (``types``, else ``declared``; each may be a subclass of its own) is
    neither ``owner``'s subclass nor its base: the two hierarchies do not meet. A class
    deriving from both, not among the parsed classes, is not considered (as dispatch
    considers the parsed subclasses only)."""
    classes = value.types or value.declared
    if ancestors is None or not classes:
        return True
    above = ancestors(owner)
    return any(name in above or owner in ancestors(name) for name in classes)


def _truth_passed_on(test: ParamTest, actual: Value) -> ParamTest | None:
    """A test of the truth of an argument that is itself a test of the caller's parameter
    (``needs_key_filter=key_filter is not None``): that test, or its negation, of the
    caller's parameter (it carries the caller's default already)."""
    truth = actual.truth
    if not isinstance(truth, ParamTest) or test.test not in (TRUTHY, FALSY):
        return None
    return truth if test.test == TRUTHY else truth.negate()


def holds_by_default(tests: Iterable[ParamTest]) -> bool:
    """Do these conditions on a function's own parameters hold when its callers leave them to
    their defaults? How the function judges a copy in flight of its own. A flag (``FLAG``)
    may hold whatever its default: a read of the function's own copy made with
    ``non_blocking=non_blocking`` is a race for every caller passing True, which no call
    reports; the callers that read the copy it returns decide it with what they pass."""
    return all(test.test == FLAG or test.by_default() for test in tests)
