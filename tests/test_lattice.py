"""Properties of the abstract domain the worklist relies on: joining values (and states) is
commutative and idempotent, and a join only ever grows what it joins (so entry states grow
monotonically and the fixpoint terminates)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bufferlint.analysis import analyze_project
from bufferlint.analysis.domain.state import State, join_states
from bufferlint.analysis.domain.values import MAX_PATH, WIDENED, Borrow, Cleared, Cond, ParamRef, Value, cap, join, map_leaves, resolve
from bufferlint.findings import TraceStep
from bufferlint.packs import builtin_vocabulary

LEAVES = st.sampled_from(
    [
        Borrow(("f", 1, 0)),
        Borrow(("f", 1, 0), view=True),
        Borrow(("g", 2, 4)),
        ParamRef(0),
        ParamRef(0, ("iter",)),
        ParamRef(1, ("item", "view")),
        ParamRef(0, ("iter", Cleared(frozenset({"ring"})))),  # checked for one kind
        Borrow(("g", 2, 4), kind="ring"),
    ]
)
IDS = st.tuples(
    st.sampled_from([("b", ("f", 1, 0)), ("p", 0, ()), ("p", 1, ())]), st.sampled_from([None, "ring", "runai-streamer"])
)  # guard facts: (identity, kind tag)


def values(depth: int = 2):
    inner = st.none() if depth == 0 else st.one_of(st.none(), st.deferred(lambda: values(depth - 1)))
    return st.builds(
        Value,
        leaves=st.frozensets(LEAVES, max_size=3),
        elems=inner,
        items=st.one_of(st.none(), st.tuples(*[values(0)] * 2)) if depth else st.none(),
        lazy=st.booleans(),
        cond=st.one_of(st.none(), st.builds(Cond, st.frozensets(IDS, max_size=2), st.frozensets(IDS, max_size=2))),
        const=st.sampled_from([None, True, False, "x"]),
        has_const=st.booleans(),
        types=st.frozensets(st.sampled_from(["a.A", "b.B"]), max_size=2),
        pending=st.frozensets(st.sampled_from([(1, 0), (2, 4)]), max_size=2),
        alloc=st.frozensets(st.sampled_from([("f", 3, 1)]), max_size=1),
    )


@settings(max_examples=100, deadline=None)
@given(values(), values())
def test_join_is_commutative(a: Value, b: Value) -> None:
    assert join(a, b) == join(b, a)


@settings(max_examples=100, deadline=None)
@given(values())
def test_join_is_idempotent(a: Value) -> None:
    assert join(a, a) == a


@settings(max_examples=100, deadline=None)
@given(values(), values())
def test_join_only_grows(a: Value, b: Value) -> None:
    """``a`` is below ``a ⊔ b``: joining it in again changes nothing."""
    joined = join(a, b)
    assert join(joined, a) == joined
    assert set(a.leaves) <= set(joined.leaves) and a.pending <= joined.pending


@settings(max_examples=100, deadline=None)
@given(values(), values(), values())
def test_join_is_associative_on_what_flows(a: Value, b: Value, c: Value) -> None:
    left, right = join(join(a, b), c), join(a, join(b, c))
    assert left.leaves == right.leaves and left.pending == right.pending and left.lazy == right.lazy


@settings(max_examples=80, deadline=None)
@given(values())
def test_cap_bounds_nesting(a: Value) -> None:
    def depth(v: Value | None) -> int:
        if v is None:
            return 0
        inner = [v.elems] + list(v.items or ())
        return 1 + max(depth(i) for i in inner)

    assert depth(cap(a, 1)) <= 2


def states():
    return st.builds(
        lambda vars_, assume, cleaned, synced: State(dict(vars_), frozenset(assume), frozenset(), frozenset(cleaned), frozenset(), synced),
        st.dictionaries(st.sampled_from(["w", "x", "y"]), values(1), max_size=3),
        st.frozensets(st.tuples(st.integers(0, 2), st.booleans()), max_size=2),
        st.frozensets(IDS, max_size=2),
        st.booleans(),
    )


@settings(max_examples=80, deadline=None)
@given(states(), states())
def test_state_join_is_commutative_and_only_grows(a: State, b: State) -> None:
    joined = join_states(a, b)
    assert joined == join_states(b, a)
    assert join_states(joined, a) == joined
    assert join_states(a, a) == a


def test_access_paths_past_the_cap_widen_to_their_prefix() -> None:
    """k-limiting (values.MAX_PATH): the step past the cap becomes ``WIDENED``, which later
    steps keep; no check of a widened part proves the parameter clean, and resolving one in a
    caller's argument gives everything the argument holds (a lazy stream's elements too)."""
    ref = ParamRef(0)
    for _ in range(MAX_PATH):
        ref = ref.extend("item")
    assert ref.path == ("item",) * MAX_PATH and ref.identity is not None
    wide = ref.extend(0)
    assert wide.path == ("item",) * MAX_PATH + (WIDENED,) and wide.identity is None
    assert wide.extend("iter") is wide and wide.extend("view") is wide
    borrowed = Borrow(("f", 1, 0))
    stream = Value(lazy=True, elems=Value(items=(Value(leaves=frozenset({borrowed})),)))
    assert borrowed in resolve(stream, (WIDENED,)).leaves, "a lazy stream's elements are in it"
    assert {leaf.site for leaf in resolve(stream, wide.path).leaves} == {borrowed.site}
    outer = resolve(Value(leaves=frozenset({ParamRef(2)})), (WIDENED,))
    assert outer.leaves == {ParamRef(2, (WIDENED,))}


def test_a_widened_path_is_found_and_reported(tmp_path: Path) -> None:
    """The fixture deep_paths.py: the helper 7 steps into its parameter is reported (it was a
    silent false negative when the cap dropped the path), with a notice naming the helper."""
    fixture = Path(__file__).parent / "fixtures" / "analysis" / "deep_paths.py"
    (tmp_path / fixture.name).write_text(fixture.read_text(encoding="utf-8"), encoding="utf-8")
    files = [tmp_path / fixture.name]
    result = analyze_project(tmp_path, files, files, builtin_vocabulary())
    assert sorted(f.span.line for f in result.findings) == [23, 24]
    assert result.notices == [
        f"deep_paths:submit_seven_deep: an access path into a parameter is longer than {MAX_PATH} steps and was "
        f"widened to its first {MAX_PATH}; findings through it may be less precise"
    ]


def test_a_widened_path_with_no_finding_through_it_is_not_told(tmp_path: Path) -> None:
    """Widening only adds paths: with no finding through the function nothing can be less
    precise, and a notice would warn of nothing. OpenRLHF 0.11.2's recursive ``pin_memory``
    (analysed for its pinned copy, in a project with no borrowed value) had one."""
    (tmp_path / "experience.py").write_text(
        "import torch\n\n\n"
        "def pin_memory(tensor):\n"
        "    if isinstance(tensor, list):\n"
        "        return [pin_memory(t) for t in tensor]\n"
        "    return tensor.pin_memory() if isinstance(tensor, torch.Tensor) else tensor\n",
        encoding="utf-8",
    )
    files = [tmp_path / "experience.py"]
    result = analyze_project(tmp_path, files, files, builtin_vocabulary())
    assert result.findings == [] and result.notices == []


def test_leaves_made_equal_keep_the_preferred_trace() -> None:
    """Two objects a callee handed back from two of its own calls become one object when
    re-identified at a call of that callee (``Borrow.at_call``): the one kept has the trace
    ``preferred_trace`` picks, not whichever the set met first (that order is not the same in
    every run: sglang 0.5.23's report showed line 4108 in one run and 4115 in another)."""
    here = Path("loader.py")
    for pair in range(40):
        first = TraceStep(here, 100 + pair, "yielded to the caller")
        second = TraceStep(here, 200 + pair, "yielded to the caller")
        leaves = frozenset({
            Borrow((f"src{pair}", ("call", 1)), trace=(second,)),
            Borrow((f"src{pair}", ("call", 2)), trace=(first,)),
        })
        mapped = map_leaves(Value(leaves=leaves), lambda leaf: leaf.at_call(("outer", 9), leaf.trace))
        (kept,) = mapped.leaves
        assert kept.trace == (first,), pair
