import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

torch = pytest.importorskip("torch")
from bufferlint import runtime as rt  # noqa: E402
from bufferlint.testing import HeldExecutor  # noqa: E402


def seed_regression(submit, executor):
    """The upstream regression test: one worker held on an Event, a task reading a view of
    shared_buffer, the streamer refilling it, release. Returns (observed, futures)."""
    shared_buffer = rt.mark_borrowed(torch.ones(4))
    observed = []
    futures = []
    f = submit(executor, lambda w: observed.append(float(w[0])), shared_buffer[:2])
    if f is not None and not f.done():
        futures.append(f)
    shared_buffer.fill_(2)  # the streamer refills the buffer
    executor.release()
    for x in futures:
        x.result()
    executor.shutdown()
    return observed, futures


def test_unguarded_async_path_is_corrupted():
    observed, futures = seed_regression(lambda ex, fn, w: ex.submit(fn, w), HeldExecutor())
    assert observed == [2.0] and len(futures) == 1


def test_guarded_submit_consumes_inline():
    observed, futures = seed_regression(lambda ex, fn, w: rt.guarded_submit(ex, fn, w), HeldExecutor())
    assert observed == [1.0] and futures == []


@pytest.mark.parametrize("policy", ["sync", "copy"])
def test_guarded_executor_policies_are_safe(policy):
    held = HeldExecutor()
    guarded = rt.GuardedExecutor(held, policy=policy)
    observed, futures = seed_regression(lambda ex, fn, w: guarded.submit(fn, w), held)
    assert observed == [1.0]
    assert len(futures) == (0 if policy == "sync" else 1)  # copy stays asynchronous


def test_guarded_executor_raise_names_the_tensor():
    held = HeldExecutor()
    guarded = rt.GuardedExecutor(held, policy="raise")
    w = rt.mark_borrowed(torch.ones(4), name="model.layers.0.mlp.weight")
    with pytest.raises(rt.BorrowedBufferError, match=r"args\[1\].*model.layers.0.mlp.weight"):
        guarded.submit(print, "x", w[:2])
    held.shutdown()


def test_owned_arguments_still_go_async():
    with ThreadPoolExecutor(1) as pool:
        guarded = rt.GuardedExecutor(pool)
        tid = guarded.submit(threading.get_ident).result()
        assert tid != threading.get_ident()
        assert guarded.submit(lambda t: threading.get_ident(), torch.ones(2)).result() != threading.get_ident()


def test_sync_inline_future_carries_exception_and_map_works():
    w = rt.mark_borrowed(torch.ones(4))
    with rt.GuardedExecutor(ThreadPoolExecutor(2)) as ex:
        def boom(t):
            raise KeyError("bad weight")

        f = ex.submit(boom, w)
        assert f.done() and isinstance(f.exception(), KeyError)
        assert list(ex.map(lambda t: float(t.sum()), [w[:1], w[:2], torch.ones(3)])) == [1.0, 2.0, 3.0]


def test_copy_replaces_borrowed_inside_containers():
    w = rt.mark_borrowed(torch.ones(4))
    held = HeldExecutor()
    ex = rt.GuardedExecutor(held, policy="copy")
    f = ex.submit(lambda d, ws: (float(d["w"].sum()), float(ws[0].sum())), {"w": w}, [w[:2]])
    w.fill_(5)
    held.release()
    assert f.result() == (4.0, 2.0)
    held.shutdown()


def test_sanitizer_raises_buffer_reuse_error():
    held = HeldExecutor()
    ex = rt.GuardedExecutor(held, sanitize=True)  # no policy: only checks
    assert ex.policy == "off"
    w = rt.mark_borrowed(torch.ones(4), name="lm_head.weight")
    f = ex.submit(lambda t: float(t.sum()), w)
    w.fill_(2)
    held.release()
    with pytest.raises(rt.BufferReuseError, match=r"lm_head.weight.*between submit and task start"):
        f.result()
    held.shutdown()
    assert rt.sanitizer.violations and isinstance(rt.sanitizer.violations[-1], rt.BufferReuseError)


def test_sanitizer_passes_when_buffer_untouched():
    with rt.GuardedExecutor(ThreadPoolExecutor(1), sanitize=True) as ex:
        w = rt.mark_borrowed(torch.ones(4))
        assert ex.submit(lambda t: float(t.sum()), w).result() == 4.0


def test_global_sanitizer_via_env(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    code = """
import torch, threading
from concurrent.futures import ThreadPoolExecutor
import bufferlint.runtime as rt
assert rt.sanitizer_enabled()
w = torch.ones(4); setattr(w, '_sglang_runai_streamer_tensor', True)
release = threading.Event()
with ThreadPoolExecutor(1) as ex:
    ex.submit(release.wait)
    f = ex.submit(lambda t: float(t.sum()), w[:2])  # an unguarded loader
    w.fill_(2); release.set()
    try:
        f.result(); print('silent')
    except rt.BufferReuseError:
        print('caught')
"""
    import os

    env = dict(os.environ, BUFFERLINT_SANITIZE="1")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "caught", out.stderr


def test_unknown_policy():
    with pytest.raises(ValueError, match="unknown policy"):
        rt.GuardedExecutor(ThreadPoolExecutor(1), policy="yolo")
