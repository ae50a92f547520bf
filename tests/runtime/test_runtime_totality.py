"""The runtime is total over what torch can hand it, and costs bounded work per submit.

Every object here is a real torch object: storage-less tensors (sparse COO/CSR, MKLDNN,
nested, meta), the fake and functional tensors of ``torch.compile`` tracing, tensor
subclasses, huge, deep and cyclic containers. Each must be accepted by every entry point
exactly as the plain executor accepts it; a marker still makes it borrowed.
"""

import functools
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402
from bufferlint.runtime import markers  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*(sparse|Sparse|nested tensors).*:UserWarning")


def _fake():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return torch.empty(3)


def _functional():
    from torch._subclasses.functional_tensor import FunctionalTensor, FunctionalTensorMode

    with FunctionalTensorMode():
        return FunctionalTensor.to_functional(torch.ones(3))


class Weird(torch.Tensor):
    """A tensor subclass whose attribute lookups fail."""

    def __getattr__(self, name):
        raise RuntimeError(f"no {name}")


class Wrapper(torch.Tensor):
    """A wrapper subclass (the DTensor pattern): no storage of its own, every op dispatched."""

    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, device=elem.device)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError(f"{func} is not supported")


STORAGELESS = {
    "sparse_coo": lambda: torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2)),
    "sparse_csr": lambda: torch.eye(3).to_sparse_csr(),
    "mkldnn": lambda: torch.randn(2, 2).to_mkldnn(),
    "nested": lambda: torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]),
    "meta": lambda: torch.empty(3, device="meta"),
    "fake": _fake,
    "functional": _functional,
    "subclass_getattr_raises": lambda: torch.ones(3).as_subclass(Weird),
    "wrapper_subclass": lambda: Wrapper(torch.ones(3)),
}


def _task(x):
    return type(x).__name__


@pytest.fixture(params=sorted(STORAGELESS))
def odd(request):
    return STORAGELESS[request.param]()


def test_is_borrowed_and_should_async_load_answer(odd):
    assert rt.is_borrowed(odd) is False
    assert rt.is_borrowed([{"w": (odd,)}]) is False
    assert rt.borrow_reason(odd) is None
    assert isinstance(rt.should_async_load(odd), bool)
    assert isinstance(markers.describe(odd), str)


@pytest.mark.parametrize("policy", rt.POLICIES)
def test_submit_that_works_plain_works_guarded(odd, policy):
    with ThreadPoolExecutor(1) as pool:
        expected = pool.submit(_task, odd).result()
        assert rt.guarded_submit(pool, _task, odd).result() == expected
        assert rt.GuardedExecutor(pool, policy=policy).submit(_task, odd).result() == expected
        assert rt.GuardedExecutor(pool, sanitize=True).submit(_task, odd).result() == expected


def test_sync_on_marker_and_patch_accept_them(odd):
    @rt.sync_on_marker
    def loader(pool):
        return pool.submit(_task, [odd]).result()

    with ThreadPoolExecutor(1) as pool:
        assert loader(pool) == "list"
    module = type(sys)("bl_odd_loader")
    module.load = lambda pool: pool.submit(_task, odd).result()
    sys.modules["bl_odd_loader"] = module
    try:
        rt.patch("bl_odd_loader:load")
        with ThreadPoolExecutor(1) as pool:
            assert module.load(pool) == type(odd).__name__
    finally:
        rt.unpatch()
        del sys.modules["bl_odd_loader"]


@pytest.mark.parametrize("name", ["sparse_coo", "sparse_csr", "nested", "meta"])
def test_a_marker_still_makes_a_storageless_tensor_borrowed(name):
    t = STORAGELESS[name]()
    rt.mark_borrowed(t)
    assert rt.is_borrowed(t) and rt.is_borrowed({"k": [t]})
    assert rt.should_async_load(t) is False
    with ThreadPoolExecutor(1) as pool:
        future = rt.guarded_submit(pool, _task, t)
        assert future.done() and future.result() == type(t).__name__  # ran inline


def test_marked_with_a_custom_marker_is_recognised():
    t = torch.eye(2).to_sparse()
    rt.mark_borrowed(t, "_team_ring_view")
    assert rt.is_borrowed(t)


def test_objects_whose_attributes_raise():
    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError("boom")

    class HostileDict(dict):
        def items(self):
            raise RuntimeError("boom")

        def __iter__(self):
            raise RuntimeError("boom")

    w = rt.mark_borrowed(torch.ones(2))
    assert rt.is_borrowed(Hostile()) is False
    assert rt.is_borrowed(HostileDict(a=w)) is True
    with ThreadPoolExecutor(1) as pool:
        assert rt.guarded_submit(pool, _task, Hostile()).result() == "Hostile"


def test_cyclic_and_deep_containers():
    w = rt.mark_borrowed(torch.ones(2))
    cyclic = [1, 2]
    cyclic.append(cyclic)
    assert rt.is_borrowed(cyclic) is False
    cyclic.append({"w": w})
    assert rt.is_borrowed(cyclic) is True

    deep = w[:1]
    for _ in range(5000):  # far beyond the recursion limit: the walk is iterative
        deep = [deep]
    [(path, _, _)] = list(rt.iter_borrowed(deep))
    assert path == "arg" + "[0]" * 5000


def test_copy_policy_copies_views_at_any_depth_and_in_shared_containers():
    w = rt.mark_borrowed(torch.ones(4))
    deep = {"w": w[:2]}
    for _ in range(50):
        deep = (deep,)
    shared = [w]

    def task(d, a, b):
        for _ in range(50):
            d = d[0]
        return float(d["w"].sum()), float(a[0].sum()), float(b[0].sum())

    from bufferlint.testing import HeldExecutor

    held = HeldExecutor()
    future = rt.GuardedExecutor(held, policy="copy").submit(task, deep, shared, shared)
    w.fill_(5)
    held.release()
    assert future.result() == (2.0, 4.0, 4.0)
    held.shutdown()


def test_views_inside_memoryviews_and_partials():
    import numpy as np

    a = rt.mark_borrowed(np.ones(8, dtype=np.uint8))
    assert rt.is_borrowed(memoryview(a[2:]))
    p = functools.partial(_task, x=[memoryview(a)])
    assert [path for path, _, _ in rt.iter_borrowed(p, "fn")] == ["fn.keywords['x'][0].obj"]


def test_plain_data_costs_bounded_work_and_the_limit_is_reported():
    big = list(range(1_000_000))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rt.is_borrowed(big) is True  # not inspected whole: the safe answer
    assert any(issubclass(c.category, markers.InspectionLimitWarning) for c in caught)
    w = rt.mark_borrowed(torch.ones(2))
    assert rt.is_borrowed([w, big])  # found before the limit
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # under the limit: no warning
        assert rt.is_borrowed([w[:1]] + list(range(100)))
        assert not rt.is_borrowed(b"x" * 10_000_000)


def test_the_walk_stops_at_the_limit_whatever_the_size(monkeypatch):
    """Deterministic stand-in for timing: past INSPECTION_LIMIT values nothing is looked at,
    so a borrowed view there is not found (the warning says the rest was skipped, and the
    answer is the safe one)."""
    monkeypatch.setattr(markers, "INSPECTION_LIMIT", 100)
    w = rt.mark_borrowed(torch.ones(2))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert rt.is_borrowed([0] * 50 + [w] + [0] * 10_000)
        assert [p for p, _, _ in rt.iter_borrowed([0] * 500 + [w])] == []
        assert [p for p, _, _ in rt.iter_borrowed([[0] * 60, [0] * 60, [w]])] == []  # values, not containers
        assert rt.is_borrowed([0] * 500)
    assert sum(issubclass(c.category, markers.InspectionLimitWarning) for c in caught) == 3


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: rt.mark_borrowed(torch.ones(1), marker=5), "marker must be an attribute name"),
        (lambda: rt.mark_borrowed(torch.ones(1), marker="not a name"), "marker must be an attribute name"),
        (lambda: rt.mark_borrowed(torch.ones(1), name=3), "name must be a string"),
        (lambda: rt.mark_borrowed([1, 2]), "marks a torch tensor or numpy array"),
    ],
)
def test_mark_borrowed_validates_its_arguments(call, message):
    with pytest.raises(TypeError, match=message):
        call()
