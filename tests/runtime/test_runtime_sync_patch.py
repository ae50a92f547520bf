import concurrent.futures
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402
from bufferlint.runtime import hooks  # noqa: E402
from bufferlint.testing import RaceHarness  # noqa: E402

NAMES = [f"w{i}" for i in range(8)]


def run_fixture_loader(load, **kw):
    """Drive an SGLang-shaped loader with the race harness; return the corrupted names."""
    race = RaceHarness()
    try:
        params = {n: torch.empty(256) for n in NAMES}
        load(params, race.weights(8, (256,)), race.executor, **kw)
        return race.corrupted(params)
    finally:
        race.close()


def model_loader(params, weights, executor):
    from bl_fixture_loaders.loader import Model

    m = Model(NAMES, 256)
    m.params = params
    m.load_weights(weights, executor)


def test_unpatched_fixture_loader_is_corrupted(fixture_pkg):
    assert len(run_fixture_loader(model_loader)) == 8


@pytest.mark.parametrize("policy", ["sync", "copy"])
def test_sync_on_marker_covers_helpers(fixture_pkg, policy):
    assert run_fixture_loader(rt.sync_on_marker(model_loader, policy=policy)) == []
    assert not hooks.installed()


def test_sync_on_marker_raise_policy(fixture_pkg):
    with pytest.raises(rt.BorrowedBufferError):
        run_fixture_loader(rt.sync_on_marker(policy="raise")(model_loader))


def test_executors_created_inside_are_covered(fixture_pkg):
    from bl_fixture_loaders.loader import Model

    seen = []

    @rt.sync_on_marker
    def load():
        buf = rt.mark_borrowed(torch.ones(4))
        with ThreadPoolExecutor(2) as pool:  # created inside the decorated function
            f = pool.submit(lambda t: (threading.get_ident(), float(t.sum())), buf[:2])
        seen.append(f.result())
        return Model  # noqa

    load()
    assert seen == [(threading.get_ident(), 2.0)]


def test_other_threads_are_not_affected():
    buf = rt.mark_borrowed(torch.ones(4))
    results = {}
    go, done = threading.Event(), threading.Event()

    def other():
        go.wait()
        with ThreadPoolExecutor(1) as pool:
            results["other"] = pool.submit(threading.get_ident).result() != threading.get_ident()
        done.set()

    t = threading.Thread(target=other)
    t.start()

    @rt.sync_on_marker
    def load():
        go.set()
        done.wait(10)
        with ThreadPoolExecutor(1) as pool:
            results["mine"] = pool.submit(lambda w: threading.get_ident(), buf).result() == threading.get_ident()

    load()
    t.join()
    assert results == {"other": True, "mine": True}


def test_hook_is_reference_counted_and_restores_submit():
    original = ThreadPoolExecutor.submit
    with rt.guard():
        assert ThreadPoolExecutor.submit is not original
        with rt.guard("copy"):
            assert hooks.active_policy() == ("copy", False)
        assert hooks.active_policy() == ("sync", False)
    assert ThreadPoolExecutor.submit is original and not hooks.installed()
    assert "__init_subclass__" not in concurrent.futures.Executor.__dict__


def test_executor_subclass_defined_while_installed_is_covered():
    with rt.guard():

        class MyExecutor(concurrent.futures.Executor):
            def submit(self, fn, /, *args, **kwargs):
                raise AssertionError("borrowed work must not reach me")

        f = MyExecutor().submit(lambda t: float(t.sum()), rt.mark_borrowed(torch.ones(3)))
        assert f.result() == 3.0


def test_generator_loader():
    buf = rt.mark_borrowed(torch.ones(2))

    @rt.sync_on_marker
    def gen_loader():
        with ThreadPoolExecutor(1) as pool:
            for _ in range(2):
                yield pool.submit(lambda t: threading.get_ident(), buf).result()
                assert hooks.active_policy() is not None
        return "done"

    g = gen_loader()
    assert next(g) == threading.get_ident()
    assert hooks.active_policy() is None  # not active while suspended
    assert list(g) == [threading.get_ident()]


def test_async_functions_rejected():
    async def f():
        pass

    with pytest.raises(TypeError):
        rt.sync_on_marker(f)


# ---------------------------------------------------------------- patch


def test_patch_method_and_unpatch(fixture_pkg):
    from bl_fixture_loaders import loader

    original = loader.Model.__dict__["load_weights"]
    assert rt.patch("bl_fixture_loaders.loader:Model.load_weights") == ["bl_fixture_loaders.loader:Model.load_weights"]
    assert rt.patched() == {"bl_fixture_loaders.loader:Model.load_weights": "sync"}
    assert run_fixture_loader(model_loader) == []
    assert rt.unpatch("bl_fixture_loaders.loader:Model.load_weights")
    assert loader.Model.__dict__["load_weights"] is original
    assert len(run_fixture_loader(model_loader)) == 8


def test_patch_static_class_and_module_functions(fixture_pkg):
    from bl_fixture_loaders import loader

    rt.patch(
        "bl_fixture_loaders.loader:Model.load_static",
        "bl_fixture_loaders.loader:Model.load_cls",
        "bl_fixture_loaders.loader:load_with_nested",
        policy="copy",
    )
    assert isinstance(loader.Model.__dict__["load_static"], staticmethod)
    assert isinstance(loader.Model.__dict__["load_cls"], classmethod)
    assert run_fixture_loader(lambda p, w, e: loader.Model.load_static(p, w, e)) == []
    assert run_fixture_loader(lambda p, w, e: loader.Model.load_cls(p, w, e)) == []
    assert run_fixture_loader(lambda p, w, e: loader.load_with_nested(p, w, e)) == []
    rt.unpatch()
    assert len(run_fixture_loader(lambda p, w, e: loader.Model.load_static(p, w, e))) == 8


def test_repatch_changes_policy(fixture_pkg):
    rt.patch("bl_fixture_loaders.loader:load_model")
    rt.patch("bl_fixture_loaders.loader:load_model", policy="raise")
    from bl_fixture_loaders import loader

    with pytest.raises(rt.BorrowedBufferError):
        run_fixture_loader(lambda p, w, e: loader.load_model(NAMES, 256, w, e))
    rt.unpatch()
    assert not hasattr(loader.load_model, "__wrapped__")


@pytest.mark.parametrize(
    "target, message",
    [
        ("no_such_pkg.mod:f", "no module named 'no_such_pkg'"),
        ("bl_fixture_loaders.loader:Nope.load", "'bl_fixture_loaders.loader' has no attribute 'Nope'"),
        ("bl_fixture_loaders.loader:Model.nope", "'bl_fixture_loaders.loader:Model' has no attribute 'nope'"),
        ("bl_fixture_loaders.loader:make_loader.<locals>.inner", "nested function.*'bl_fixture_loaders.loader:make_loader'"),
        ("bl_fixture_loaders.loader", "expected 'package.module:Qualified.name'"),
        ("bl_fixture_loaders.loader:Model", "is a class"),
        ("bl_fixture_loaders.loader:torch", "not a function"),
    ],
)
def test_patch_errors_strict(fixture_pkg, target, message):
    with pytest.raises(rt.PatchError, match=message):
        rt.patch(target, strict=True)
    assert rt.patched() == {} and rt.status() == []


def test_strict_patch_is_all_or_nothing(fixture_pkg):
    with pytest.raises(rt.PatchError):
        rt.patch("bl_fixture_loaders.loader:load_model", "bl_fixture_loaders.loader:missing", strict=True)
    assert rt.patched() == {} and rt.status() == []
