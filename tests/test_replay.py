"""The recorded analyses' codec and the renumbering of edited lines (``analysis.codec``,
``analysis.edits``); the replay itself is tested through the cache (tests/test_cache.py)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
from pathlib import Path

import pytest

from bufferlint.analysis.incremental.codec import CLASSES, Decoder, Encoder, Unencodable, digest
from bufferlint.analysis.incremental.edits import ADDED_COLUMN, renumber
from bufferlint.analysis.incremental.replay import NotRecorded, outside_answer
from bufferlint.analysis.domain.summaries import EMPTY_SUMMARY
from bufferlint.analysis.domain.summaries import SinkReach, Summary
from bufferlint.analysis.domain.values import Borrow, BuiltByParameter, Field, ParamRef, Value
from bufferlint.findings import TraceStep
from bufferlint.hazards import Hazard


def _value(trace_line: int) -> Value:
    step = TraceStep(Path("/p/m.py"), trace_line, "views a reused buffer")
    return Value(leaves=frozenset({Borrow(("m.f", 3, 4), False, (step,)), ParamRef(0)}))


def test_the_codec_gives_back_what_it_was_given_through_json() -> None:
    sink = TraceStep(Path("/p/m.py"), 5, "", ("sink", Hazard.KEPT_PAST_STEP, "cache.append"))
    reach = SinkReach(0, ("iter",), frozenset(), None, (sink,), Hazard.HOST_READS_IN_FLIGHT)
    summary = Summary(returns=_value(3), sinks=frozenset({reach}), guards=frozenset({(0, "kind")}))
    encoder = Encoder()
    data = json.loads(json.dumps({"rows": encoder.rows, "top": encoder.encode((summary, {"k": [b"x", None]}))}))
    back = Decoder(data["rows"]).decode(data["top"])
    assert back == (summary, {"k": [b"x", None]})
    assert next(iter(back[0].sinks)).trace == (sink,)  # a hazard comes back as itself
    assert digest(back) == digest((summary, {"k": [b"x", None]}))  # traces included


def test_the_digest_sees_traces_but_not_set_order() -> None:
    assert _value(3) == _value(9)  # equality ignores traces ...
    assert digest(_value(3)) != digest(_value(9))  # ... the digest does not
    items = [("a", 1), ("b", 2), ("c", 3)]
    assert digest(frozenset(items)) == digest(frozenset(reversed(items)))


# Classes of the domain that never sit inside a summary, a value or a log (the fixpoint's
# per-function state, the guard evaluation's intermediate facts).
NOT_RECORDED = {"State", "GuardFacts"}


def test_every_class_of_the_analysis_values_can_be_recorded() -> None:
    """A value class the codec does not know makes every analysis holding it unrecordable:
    an edit near it is then analysed afresh, silently slower (a record parameter's ``Field``
    path step did so to sglang 0.5.16's weight updater, and with it issue 31's kept-weight
    edit). Every class the domain defines is known, or named here as never recorded."""
    from bufferlint.analysis import domain

    defined = set()
    for info in pkgutil.iter_modules(domain.__path__):
        module = importlib.import_module(f"{domain.__name__}.{info.name}")
        defined |= {name for name, obj in vars(module).items()
                    if dataclasses.is_dataclass(obj) and isinstance(obj, type) and obj.__module__ == module.__name__}
    assert defined - NOT_RECORDED <= set(CLASSES), sorted(defined - NOT_RECORDED - set(CLASSES))
    field_step = ParamRef(1, (Field(3), "view"))
    built = BuiltByParameter(0, True, "zero_copy", True)
    encoder = Encoder()
    data = json.loads(json.dumps({"rows": encoder.rows, "top": encoder.encode((field_step, built))}))
    assert Decoder(data["rows"]).decode(data["top"]) == (field_step, built)
    assert digest(field_step) != digest(ParamRef(1, (Field(4), "view")))


def test_values_of_unknown_classes_are_refused() -> None:
    with pytest.raises(Unencodable):
        Encoder().encode(object())
    with pytest.raises(Unencodable):
        digest(object())
    with pytest.raises(Unencodable):
        Decoder([{"c": "os.system", "f": []}]).decode({"r": 0})


def test_added_lines_keep_their_order_and_never_share_a_position() -> None:
    old = ["a", "b", "c"]
    new = ["a", "x", "y", "b", "C"]
    forward, backward, shared = renumber(old, new)
    assert forward[1] == (1, 0) and forward[4] == (2, 0)
    assert forward[2] == (1, ADDED_COLUMN) and forward[3] == (1, 2 * ADDED_COLUMN)  # after "a", in order
    assert forward[5] == (3, 0)  # "c" edited into "C": the same place while replaying
    assert backward == {1: 1, 2: 4}  # but no recorded position on "c" names a character of "C"
    assert shared == {1}


def test_only_questions_about_names_outside_the_project_are_answered_without_a_record() -> None:
    modules = frozenset({"pkg", "pkg.loader"})
    assert outside_answer(("summary", "torch.cat"), modules) is EMPTY_SUMMARY
    assert outside_answer(("canonical", "builtins.print"), modules) == "builtins.print"
    assert outside_answer(("function", "torch.cat"), modules) is None
    assert outside_answer(("field_types", ("torch.Tensor",), "data"), modules) == frozenset()
    assert outside_answer(("summary", "pkg.loader.load"), modules) is NotRecorded  # the fixpoint knows it
    assert outside_answer(("canonical", "pkg.helpers"), modules) is NotRecorded  # in a project package
    assert outside_answer(("methods_named", "copy_"), modules) is NotRecorded  # any parsed class may define it


def test_a_question_no_write_can_change_is_answered_after_any_write() -> None:
    """Summaries and the index do not change while one analysis runs; fields and hot
    parameters do (with the analysis's own writes), so those are answered only as recorded
    after as many writes."""
    from bufferlint.analysis.incremental.replay import AnalysisLog, ModuleSource, ReplayProgram

    log = AnalysisLog()
    log.read(("summary", "pkg.f"), EMPTY_SUMMARY)
    log.read(("field", ("pkg.C",), "x"), None)
    log.write(("activate", "pkg.g"))
    replay = ReplayProgram(log, None, None, ModuleSource(lambda name: None, lambda: frozenset({"pkg"})))
    replay.activate("pkg.g")
    assert replay.summary("pkg.f") is EMPTY_SUMMARY
    with pytest.raises(NotRecorded):
        replay.field_value({"pkg.C"}, "x")


def _functions(text: str) -> dict:
    import ast

    from bufferlint.analysis.frontend.index import ModuleInfo, ProjectIndex

    index = ProjectIndex()
    index.add_module(ModuleInfo("pkg.mod", Path("/p/pkg/mod.py"), ast.parse(text), text, False))
    return index.functions


def test_an_outlined_function_binds_like_the_function_and_reads_its_module_only_when_asked() -> None:
    from bufferlint.analysis.incremental.replay import OutlinedFunction, outline_of

    real = _functions("class Model:\n    async def load_weights(self, weights, *rest, strict=True, **extra):\n"
                      "        return weights\n")["pkg.mod.Model.load_weights"]
    loads: list[str] = []

    def load():
        loads.append(real.qualname)
        return real

    outlined = OutlinedFunction(real.qualname, json.loads(json.dumps(outline_of(real))), load)
    for attribute in ("display", "class_qualname", "kind", "params", "n_positional", "n_required", "required_kwonly",
                      "vararg", "kwarg", "binds_receiver", "is_async", "returns_parameter_call", "outer", "name"):
        assert getattr(outlined, attribute) == getattr(real, attribute), attribute
    for n_args, keywords in ((1, set()), (0, set()), (3, {"strict"}), (None, {"other"})):
        assert outlined.accepts(n_args, keywords, True) == real.accepts(n_args, keywords, True)
    assert outlined == outlined and outlined != real  # one per function in a replay: identity
    assert loads == []  # binding a call needs no syntax tree
    assert outlined.node is real.node and outlined.module is real.module and outlined.is_generator is False
    assert loads and set(loads) == {real.qualname}


def test_a_nested_function_has_no_outline() -> None:
    from bufferlint.analysis.incremental.replay import outline_of

    functions = _functions("def outer(x):\n    def inner(y):\n        return y\n    return inner\n")
    assert outline_of(functions["pkg.mod.outer"]) is not None
    assert outline_of(functions["pkg.mod.outer.<locals>.inner"]) is None
