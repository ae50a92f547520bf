import functools
import gc
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _imports_torch(stmt):
    code = f"import sys; {stmt}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_import_bufferlint_does_not_import_torch():
    assert not _imports_torch("import bufferlint")


def test_import_runtime_and_testing_do_not_import_torch():
    assert not _imports_torch("import bufferlint.runtime, bufferlint.testing, bufferlint.testing.plugin, bufferlint.shimgen")


torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402


def test_views_of_a_marked_tensor_are_borrowed():
    buf = torch.arange(64, dtype=torch.float32)
    t = rt.mark_borrowed(buf.view(8, 8))
    views = [t.narrow(0, 2, 3), t[1:3], t.view(64), t.reshape(4, 16), t.detach(), t.t(), t[:, 3], buf[60:]]
    for v in views:
        assert not hasattr(v, rt.DEFAULT_MARKER)  # the attribute is lost on every view...
        assert rt.is_borrowed(v)  # ...the storage is not
    assert rt.should_async_load(t[0]) is False


def test_sglang_setattr_marker_recognised_and_tracked():
    buf = torch.ones(32)
    w = buf[:16]
    setattr(w, "_sglang_runai_streamer_tensor", True)
    assert rt.is_borrowed(w) and "_sglang_runai_streamer_tensor" in rt.borrow_reason(w)
    assert rt.is_borrowed(w.narrow(0, 0, 4))  # registered once seen


def test_setattr_marker_inside_guard_registers_buffer_before_any_check():
    buf = torch.ones(32)
    with rt.guard("sync"):
        w = buf[:16]
        early_view = w[2:4]
        setattr(w, "_sglang_runai_streamer_tensor", True)
        late_view = w.view(4, 4)
    assert rt.is_borrowed(early_view) and rt.is_borrowed(late_view)


def test_owned_memory_is_not_borrowed():
    buf = rt.mark_borrowed(torch.ones(16))
    assert not rt.is_borrowed(torch.ones(16))
    assert not rt.is_borrowed(buf.clone())
    assert rt.should_async_load(torch.ones(3)) is True
    assert rt.should_async_load(torch.ones(3, device="meta")) is False
    assert rt.should_async_load("not a tensor") is False and rt.should_async_load(None) is False


def test_containers_and_partials_are_searched():
    v = rt.mark_borrowed(torch.ones(8))[2:4]
    assert rt.is_borrowed((1, [{"w": v}]))
    assert rt.is_borrowed(functools.partial(print, v))
    assert rt.is_borrowed(functools.partial(print, w=v))
    assert not rt.is_borrowed((1, [torch.ones(2)], {"a": "b"}))
    paths = [p for p, _, _ in rt.iter_borrowed({"x": [0, v]}, "kwargs")]
    assert paths == ["kwargs['x'][1]"]


def test_registry_is_weak():
    before = rt.markers.registered_count()
    t = rt.mark_borrowed(torch.ones(1024))
    view = t[5:9]
    assert rt.markers.registered_count() == before + 1
    del t
    gc.collect()
    assert rt.markers.registered_count() == before + 1  # the view keeps the storage alive
    del view
    gc.collect()
    assert rt.markers.registered_count() == before


def test_numpy_arrays():
    np = pytest.importorskip("numpy")
    a = np.zeros(100, dtype=np.float32)
    rt.mark_borrowed(a[10:20])
    assert rt.is_borrowed(a[50:60])  # the whole buffer is registered
    assert rt.is_borrowed(torch.from_numpy(a)[0:4])  # and a tensor over the same memory
    assert not rt.is_borrowed(np.zeros(4))


def test_mark_iter_and_register_marker():
    buf = torch.zeros(8)
    items = list(rt.mark_iter(iter([("a", buf[:4]), ("b", buf[4:])])))
    assert all(rt.is_borrowed(t) for _, t in items)
    rt.register_marker("_my_team_borrowed")
    x = torch.ones(2)
    x._my_team_borrowed = True
    assert rt.is_borrowed(x)
    with pytest.raises(ValueError):
        rt.register_marker("not an identifier")
