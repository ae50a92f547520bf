"""Proof on the real thing: runai-model-streamer (owned=False, RUNAI_STREAMER_MEMORY_LIMIT=0)
streaming a generated safetensors checkpoint into SGLang-shaped loaders.

Observed on runai-model-streamer 0.17.1: with owned=False and RUNAI_STREAMER_MEMORY_LIMIT=0 the
ring is one buffer holding one tensor, refilled as soon as the consumer asks for the next item,
so every tensor a loader has not consumed by then is overwritten (7 of 8 here; the last one is
never overwritten). owned=True (the default) never reuses.
"""


import pytest

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")
runai = pytest.importorskip("runai_model_streamer")

from bufferlint import runtime as rt  # noqa: E402
from bufferlint.testing import HeldExecutor  # noqa: E402

N, NUMEL = 8, 256 * 1024  # 8 tensors of 1 MiB (float32), tensor i filled with i
NAMES = [f"w{i}" for i in range(N)]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "model.safetensors"
    safetensors_torch.save_file({name: torch.full((NUMEL,), float(i)) for i, name in enumerate(NAMES)}, str(path))
    return str(path)


@pytest.fixture(autouse=True)
def reusing_streamer(monkeypatch):
    monkeypatch.setenv("RUNAI_STREAMER_MEMORY_LIMIT", "0")
    monkeypatch.setenv("RUNAI_STREAMER_LOG_LEVEL", "WARNING")


def runai_iterator(path, mark=True, owned=False):
    """SGLang's runai_safetensors_weights_iterator, reduced: stream, mark, yield."""
    with runai.SafetensorsStreamer() as streamer:
        streamer.stream_files([path], owned=owned)
        for name, tensor in streamer.get_tensors():
            if mark:
                setattr(tensor, "_sglang_runai_streamer_tensor", True)
            yield name, tensor


def released_at_end(weights, held):
    """Release the held worker when the producer is exhausted (so a loader that waits on its
    futures after the loop does not deadlock); by then every buffer refill has happened."""
    try:
        yield from weights
    finally:
        held.release()


def corrupted(params):
    return [n for i, n in enumerate(NAMES) if not bool(params[n].eq(float(i)).all())]


def run(checkpoint, load, executor_wrapper=lambda held: held, mark=True):
    from bl_fixture_loaders.loader import Model

    held = HeldExecutor()
    try:
        model = Model(NAMES, NUMEL)
        load(model, released_at_end(runai_iterator(checkpoint, mark=mark), held), executor_wrapper(held))
        return corrupted(model.params)
    finally:
        held.shutdown()


def plain(model, weights, executor):
    model.load_weights(weights, executor)


def test_streamer_really_reuses_its_buffer(checkpoint):
    kept = [(n, t) for n, t in runai_iterator(checkpoint, mark=False)]
    assert len({t.data_ptr() for _, t in kept}) == 1
    assert [float(t[0]) for _, t in kept] == [float(N - 1)] * N
    owned = [(n, t) for n, t in runai_iterator(checkpoint, mark=False, owned=True)]
    assert [float(t[0]) for _, t in owned] == [float(i) for i in range(N)]


def test_unguarded_loader_with_held_worker_is_corrupted(checkpoint, fixture_pkg):
    bad = run(checkpoint, plain)
    assert len(bad) == N - 1 and bad == NAMES[:-1]


def test_guarded_submit(checkpoint, fixture_pkg):
    def load(model, weights, executor):
        futures = [rt.guarded_submit(executor, model.params[n].copy_, w) for n, w in weights]
        for f in futures:
            f.result()

    assert run(checkpoint, load) == []


@pytest.mark.parametrize("policy", ["sync", "copy"])
def test_guarded_executor(checkpoint, fixture_pkg, policy):
    assert run(checkpoint, plain, lambda held: rt.GuardedExecutor(held, policy=policy)) == []


def test_guarded_executor_raise(checkpoint, fixture_pkg):
    with pytest.raises(rt.BorrowedBufferError, match=r"args\[1\] of weight_loader .*_sglang_runai_streamer_tensor"):
        run(checkpoint, plain, lambda held: rt.GuardedExecutor(held, policy="raise"))
    # a producer marked through mark_iter also gets the tensor's name into the message
    with pytest.raises(rt.BorrowedBufferError, match="buffer of w0"):
        run(checkpoint, lambda m, w, e: plain(m, rt.mark_iter(w), e),
            lambda held: rt.GuardedExecutor(held, policy="raise"), mark=False)


@pytest.mark.parametrize("policy", ["sync", "copy"])
def test_sync_on_marker(checkpoint, fixture_pkg, policy):
    assert run(checkpoint, rt.sync_on_marker(plain, policy=policy)) == []


def test_patch(checkpoint, fixture_pkg):
    rt.patch("bl_fixture_loaders.loader:Model.load_weights")
    try:
        assert run(checkpoint, plain) == []
    finally:
        rt.unpatch()
    assert run(checkpoint, plain) != []


def test_sanitizer_on_unguarded_loader(checkpoint, fixture_pkg):
    rt.enable_sanitizer()  # what BUFFERLINT_SANITIZE=1 does at import
    try:
        with pytest.raises(rt.BufferReuseError, match=r"args\[1\] of weight_loader .*between submit and task start"):
            run(checkpoint, plain)
    finally:
        rt.disable_sanitizer()


def test_unmarked_producer_views_through_mark_iter(checkpoint, fixture_pkg):
    """A producer that does not mark (vLLM's iterator, the raw streamer) made safe by mark_iter."""
    assert run(checkpoint, rt.sync_on_marker(lambda m, w, e: plain(m, rt.mark_iter(w), e)), mark=False) == []


def test_audit_flags_unmarked_reuse(checkpoint):
    audited = rt.audit(runai_iterator(checkpoint, mark=False), on_reuse="collect")
    for _ in audited:
        pass
    assert len(audited.findings) == N - 1 and "'w0'" in audited.findings[0]
    with pytest.raises(rt.UnmarkedReuseError):
        list(rt.audit(runai_iterator(checkpoint, mark=False), on_reuse="raise"))


def test_audit_silent_for_marked_and_owned(checkpoint):
    for it in (runai_iterator(checkpoint, mark=True), runai_iterator(checkpoint, mark=False, owned=True)):
        audited = rt.audit(it, on_reuse="raise")
        assert len(list(audited)) == N and audited.findings == []
