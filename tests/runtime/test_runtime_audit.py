import pytest

torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402


def reusing_producer(n=4, mark=False):
    buf = torch.empty(16)
    for i in range(n):
        buf.fill_(i)
        v = buf[:]
        if mark:
            rt.mark_borrowed(v)
        yield f"t{i}", v


def test_warns_on_unmarked_reuse():
    with pytest.warns(rt.UnmarkedReuseWarning) as record:
        items = list(rt.audit(reusing_producer()))
    assert len(items) == 4 and len(record) == 3
    assert "'t0'" in str(record[0].message) and "no borrow marker" in str(record[0].message)


def test_raise_mode():
    audited = rt.audit(reusing_producer(), on_reuse="raise")
    next(audited)
    with pytest.raises(rt.UnmarkedReuseError, match="reused the memory of 't0'.* for 't1'"):
        next(audited)


def test_marked_and_owning_producers_are_clean():
    list(rt.audit(reusing_producer(mark=True), on_reuse="raise"))
    list(rt.audit(((f"t{i}", torch.full((16,), float(i))) for i in range(4)), on_reuse="raise"))


def test_aliasing_without_rewrite_is_not_reuse():
    big = torch.arange(32.0)
    items = [("all", big), ("first", big[:16]), ("bare", big[16:])]
    list(rt.audit(iter(items), on_reuse="raise"))


def test_window_bounds_what_is_held():
    audited = rt.audit(reusing_producer(6), on_reuse="collect", window=1)
    list(audited)
    assert len(audited.findings) == 5
