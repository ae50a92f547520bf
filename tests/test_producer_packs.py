"""The shipped producer packs (rules/pyzmq.toml, rules/shared-memory.toml,
rules/instanttensor.toml), end to end on the
fixture projects in tests/fixtures/producers (written like real code: each bug beside its
fixed twin, ``# expect:`` on the reported lines, ``# todo-expect:`` and ``# known-fp:`` for
the known gaps), and the libraries' documented behaviour the packs are written from, checked
against the real pyzmq, NumPy and safetensors."""

from __future__ import annotations

import inspect
import shutil
from multiprocessing.shared_memory import SharedMemory
from pathlib import Path

import numpy as np
import pytest
import torch
import zmq
from safetensors import safe_open
from safetensors.torch import save_file

from bufferlint.analysis import analyze_project
from bufferlint.config import load_settings
from bufferlint.packs import builtin_vocabulary
from test_analysis_fixtures import TODO, annotated

FIXTURES = Path(__file__).parent / "fixtures" / "producers"
CASES = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def findings(root: Path, vocab=None) -> list[str]:
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, vocab or load_settings(root).vocab)
    assert result.errors == []
    return sorted(f"{f.path.relative_to(root).as_posix()}:{f.span.line}: {f.rule}" for f in result.findings)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_family_reports_its_bugs_and_not_their_fixes(case: Path, tmp_path: Path) -> None:
    root = tmp_path / case.name
    shutil.copytree(case, root)
    got = findings(root)
    assert got == annotated(root)
    assert not set(got) & set(annotated(root, TODO)), "a known gap is closed: promote its todo-expect to expect"


def test_shared_memory_blocks_are_sources_where_the_project_says_when_they_are_refilled(tmp_path: Path) -> None:
    """The shipped pack gives the kind only: whether and when a block is refilled is the
    project's protocol (a block written once and kept is correct code), so without the
    project's declaration nothing of it is borrowed."""
    root = tmp_path / "shm_env"
    shutil.copytree(FIXTURES / "shm_env", root)
    assert findings(root, builtin_vocabulary()) == []
    assert builtin_vocabulary().kinds["shared-memory"].copy_of("view") == "bytes(view)"


def test_zmq_sends_copying_or_tracked_are_not_hand_offs(tmp_path: Path) -> None:
    """Without the project's encoder declared, nothing it sends is borrowed: the pyzmq pack
    only consumes values some source lends."""
    root = tmp_path / "zmq_publisher"
    shutil.copytree(FIXTURES / "zmq_publisher", root)
    assert findings(root, builtin_vocabulary()) == []


def test_the_pyzmq_patterns_name_the_copy_parameter() -> None:
    """`copy@N=False`: positional argument N (after self) of each method is pyzmq's `copy`,
    and it defaults to True (a call that leaves it out copies)."""
    sinks = [p for spec in builtin_vocabulary().sinks for p in spec.calls if p.qualname and p.qualname.startswith("zmq.Socket.")]
    assert {p.last_name for p in sinks} == {"send", "send_multipart", "send_serialized"}
    for pattern in sinks:
        (condition,) = pattern.required_kwargs
        params = list(inspect.signature(getattr(zmq.Socket, pattern.last_name)).parameters.values())[1:]
        assert params[condition.position].name == condition.key == "copy"
        assert params[condition.position].default is True and condition.value is False


@pytest.fixture
def pair():
    context = zmq.Context()
    sender, receiver = context.socket(zmq.PAIR), context.socket(zmq.PAIR)
    sender.bind("inproc://producers")
    receiver.connect("inproc://producers")
    yield sender, receiver
    sender.close(linger=0)
    receiver.close(linger=0)
    context.term()


def test_zmq_send_without_copy_reads_the_buffer_after_send_returns(pair) -> None:
    """The hazard the sinks report: a buffer changed after `send(copy=False)` returned is
    what the peer receives; the tracker is done only once libzmq let go of it."""
    sender, receiver = pair
    buffer = bytearray(b"a" * (2 * zmq.COPY_THRESHOLD))
    tracker = sender.send(buffer, copy=False, track=True)
    assert not tracker.done
    buffer[:5] = b"XXXXX"  # reused before the message left
    frame = receiver.recv(copy=False)
    assert bytes(frame.buffer[:6]) == b"XXXXXa"
    del frame
    tracker.wait(5)
    assert tracker.done
    assert sender.send(buffer, copy=False) is None  # untracked: nothing to wait for


def test_a_frame_received_without_copy_owns_its_memory(pair) -> None:
    """Why `recv(copy=False)` is no source: each frame keeps its own message."""
    sender, receiver = pair
    sender.send(b"y" * (2 * zmq.COPY_THRESHOLD))
    first = receiver.recv(copy=False)
    sender.send(b"z" * (2 * zmq.COPY_THRESHOLD))
    second = receiver.recv(copy=False)
    assert bytes(first.buffer[:3]) == b"yyy" and bytes(second.buffer[:3]) == b"zzz"


def test_views_of_a_shared_memory_block_read_what_the_writer_puts_there() -> None:
    block = SharedMemory(create=True, size=16)
    try:
        reader = SharedMemory(name=block.name)
        observation = np.frombuffer(reader.buf, dtype=np.uint8)
        tensor = torch.frombuffer(reader.buf, dtype=torch.uint8)
        block.buf[:4] = b"\x01\x02\x03\x04"  # the writer refills the block
        assert observation[:4].tolist() == [1, 2, 3, 4] and tensor[:4].tolist() == [1, 2, 3, 4]
        del observation, tensor
        reader.close()
    finally:
        block.close()
        block.unlink()


def test_safe_open_hands_out_views_of_a_mapping_nothing_refills(tmp_path: Path) -> None:
    """Why no safetensors source is shipped (safetensors 0.8.0): `get_tensor` returns views
    of the file's mapping, and two reads of one name share it, but nothing refills it: a
    tensor keeps its values after later reads and after the file is closed."""
    path = tmp_path / "weights.safetensors"
    save_file({"a": torch.arange(8, dtype=torch.float32), "b": torch.ones(4)}, str(path))
    with safe_open(str(path), framework="pt") as handle:
        first = handle.get_tensor("a")
        again = handle.get_tensor("a")
        handle.get_tensor("b")
        assert first.data_ptr() == again.data_ptr()  # a view, not a fresh copy
    assert first.tolist() == list(range(8))
    assert not any(str(p).startswith("safetensors.") for spec in builtin_vocabulary().sources for p in spec.calls)


def test_show_settings_lists_the_packs_in_effect(tmp_path: Path) -> None:
    from bufferlint.show_settings import show_settings

    root = tmp_path / "zmq_publisher"
    shutil.copytree(FIXTURES / "zmq_publisher", root)
    listing, _ = show_settings(load_settings(root), sorted(root.rglob("*.py")))
    packs = listing.split("\n[packs]\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(":", 1)[0].strip() for line in packs[:-1]] == [
        "instanttensor", "pyzmq", "runai-streamer", "shared-memory", "stdlib", "torch"]
    assert all(line.endswith(".toml)") and "(shipped " in line for line in packs[:-1])
    assert packs[-1].strip() == f"{root / 'pyproject.toml'}: [tool.bufferlint]"


def test_instanttensor_readers_lend_by_how_they_were_built(tmp_path: Path) -> None:
    """With nothing declared, an instanttensor older than 0.1.9 (no `copy`: every reader
    lends) may be installed; declared >=0.1.9, a reader built without `copy` owns its tensors
    and one built with `copy=False` still lends."""
    root = tmp_path / "instanttensor_loader"
    shutil.copytree(FIXTURES / "instanttensor_loader", root)
    lines = (root / "ckpt" / "loaders.py").read_text(encoding="utf-8").splitlines()
    with_line = next(n for n, line in enumerate(lines, 1) if line.endswith("# copy defaults to True"))
    by_default = f"ckpt/loaders.py:{with_line + 2}: BL003"  # weights[name] = tensor
    assert by_default not in findings(root)
    (root / "pyproject.toml").write_text('[project]\nname = "ckpt"\nversion = "0"\n', encoding="utf-8")
    assert by_default in findings(root)
    assert "ckpt/loaders.py:11: BL003" in findings(root)


def test_a_built_producers_method_is_read_only_where_the_producer_is_made(tmp_path: Path) -> None:
    """`tensors` is a common method name: a module calling it that neither names
    `instanttensor.safe_open` nor a helper returning its reader is not read for it (vLLM
    0.33.0's attention builders were, and a by-name call resolution there made a false BL005)."""
    root = tmp_path / "instanttensor_loader"
    shutil.copytree(FIXTURES / "instanttensor_loader", root)
    files = sorted(root.rglob("*.py"))
    parsed = analyze_project(root, files, files, load_settings(root).vocab).files_parsed
    (root / "ckpt" / "unrelated.py").write_text("def count(batch):\n    return len(batch.tensors())\n",
                                                encoding="utf-8")
    files = sorted(root.rglob("*.py"))
    result = analyze_project(root, files, files, load_settings(root).vocab)
    assert result.files_parsed == parsed and result.findings


def test_the_instanttensor_pack_names_the_copy_parameter_of_safe_open() -> None:
    """instanttensor 0.1.9 and newer: `safe_open(..., *, copy: bool = True)` (the package
    imports without a GPU; opening a file needs one)."""
    instanttensor = pytest.importorskip("instanttensor")
    copy = inspect.signature(instanttensor.safe_open.__init__).parameters["copy"]
    assert copy.default is True and copy.kind is inspect.Parameter.KEYWORD_ONLY
    built_by = {str(c.built_by) for s in builtin_vocabulary().sources for c in s.owned_if if c.built_by}
    assert built_by == {"instanttensor.safe_open"}


@pytest.mark.parametrize("cond", [
    '{ built-by = "r.Reader", receiver-call = "open", kwarg = "copy", equals = true }',
    '{ built-by = "r.Reader(copy=True)", kwarg = "copy", equals = true }',
    '{ built-by = ["r.Reader", "r.open"], kwarg = "copy", equals = true }',
])
def test_built_by_is_one_construction_pattern(cond: str) -> None:
    import tomllib

    from bufferlint.packs import PackError, vocabulary_from_dict
    data = tomllib.loads(f'[[sources]]\ncall = "r.Reader.read"\nowned-if = [{cond}]\n')
    with pytest.raises(PackError, match="built-by"):
        vocabulary_from_dict(data, "test")


@pytest.mark.parametrize("entry", ["zmq.MessageTracker.done", ".done(timeout=1)"])
def test_done_flags_are_attributes_or_methods_of_the_handle(entry: str) -> None:
    from bufferlint.packs import PackError, vocabulary_from_dict

    with pytest.raises(PackError, match="done-flags: expected '.name' patterns"):
        vocabulary_from_dict({"done-flags": [entry]}, "pack.toml")


def test_a_tracker_wait_with_a_timeout_raises_unless_the_send_is_done() -> None:
    """The pyzmq pack settles a send at `tracker.wait(timeout)` (unlike the stdlib's `.wait`,
    which settles only without a timeout): pyzmq's `MessageTracker.wait` raises `NotDone` when
    the timeout passes first, so the code after it runs only once libzmq is done. The sends
    return their tracker as the class the pack's settler names (`handle`)."""
    import threading

    pending = threading.Event()
    tracker = zmq.MessageTracker(pending)
    with pytest.raises(zmq.NotDone):
        tracker.wait(timeout=0.01)
    pending.set()
    tracker.wait(timeout=0.01)
    assert tracker.done
    qualname = f"{zmq.MessageTracker.__module__}.{zmq.MessageTracker.__qualname__}"
    vocab = builtin_vocabulary()
    assert f"{qualname}.wait" in {p.qualname for p in vocab.settlers}
    assert {spec.handle for spec in vocab.sinks if any(p.last_name.startswith("send") for p in spec.calls)} == {qualname}


def test_send_multipart_returns_the_last_frames_tracker(pair) -> None:
    """Why the pack's `send_multipart` sink says `handle-covers = "last-part"`: pyzmq sends
    each frame on its own and returns the last one's tracker; a small last frame is copied and
    its tracker is done at once, while libzmq still holds the first frame's buffer, so a
    buffer reused once that tracker is done is what the peer receives."""
    source = inspect.getsource(zmq.Socket.send_multipart)
    assert "return self.send(msg_parts[-1], flags, copy=copy, track=track)" in source
    sender, receiver = pair
    payload = bytearray(b"a" * (2 * zmq.COPY_THRESHOLD))
    tracker = sender.send_multipart([payload, b"end"], copy=False, track=True)
    assert tracker.done  # the copied last frame's
    payload[:5] = b"XXXXX"  # reused "after the send was done"
    first, _ = receiver.recv_multipart(copy=False)
    assert bytes(first.buffer[:6]) == b"XXXXXa"
    del first
    covers = {spec.handle_covers for spec in builtin_vocabulary().sinks
              if any(p.last_name == "send_multipart" for p in spec.calls)}
    assert covers == {"last-part"}


@pytest.mark.parametrize("table, error", [
    ('call = ".send_parts"\nhandle-covers = "first"\nhandle = "a.T"', "'handle-covers' must be"),
    ('call = ".send_parts"\nhandle-covers = "last-part"', "needs the 'handle'"),
])
def test_handle_covers_is_checked(table: str, error: str) -> None:
    import tomllib

    from bufferlint.packs import PackError, vocabulary_from_dict
    with pytest.raises(PackError, match=error):
        vocabulary_from_dict(tomllib.loads(f"[[sinks]]\n{table}\n"), "test")


def test_ready_after_ends_the_refill_of_an_advance_of_its_own_source() -> None:
    import tomllib

    from bufferlint.packs import PackError, vocabulary_from_dict
    with pytest.raises(PackError, match="'ready-after' ends the refill an 'advances' call starts"):
        vocabulary_from_dict(tomllib.loads('[[sources]]\ncall = "r.Reader.read"\nready-after = [".ready"]\n'), "test")


SHARED_ACK = '''
[project]
name = "rx"
version = "0"

[[tool.bufferlint.sources]]
attribute = ["multiprocessing.shared_memory.SharedMemory.buf"]
kind = "shared-memory"
advances = [".ack"]
ready-after = [".next_layout"]
'''

RING_ACK = '''
[[tool.bufferlint.sources]]
call = "rx.ring.Ring.slot"
kind = "memoryview"
advances = [".ack"]
'''

RECEIVER = '''from multiprocessing.shared_memory import SharedMemory

from rx.ring import Ring


def receive(block: str, ring: Ring, worker, load):
    window = SharedMemory(name=block).buf
    slot = ring.slot()
    while True:
        layout = worker.next_layout()
        load(window[layout.offset : layout.end], slot)
        worker.ack()
'''


@pytest.mark.parametrize("ring_declared, expected", [(False, []), (True, ["rx/receiver.py:11: BL003"])])
def test_ready_after_ends_only_the_refills_of_the_sources_declaring_it(tmp_path: Path, ring_declared: bool,
                                                                       expected: list[str]) -> None:
    """After `next_layout()` the shared block is whole again, as its source says; a ring's slot
    that the same acknowledgement lets its producer refill, with no `ready-after` of its own,
    is still read after the ring may have refilled it."""
    (tmp_path / "rx").mkdir()
    (tmp_path / "rx" / "__init__.py").write_text("")
    (tmp_path / "rx" / "ring.py").write_text("class Ring:\n    def slot(self):\n        return memoryview(bytearray(8))\n")
    (tmp_path / "rx" / "receiver.py").write_text(RECEIVER)
    (tmp_path / "pyproject.toml").write_text(SHARED_ACK + (RING_ACK if ring_declared else ""))
    assert findings(tmp_path) == expected


def test_a_view_moved_to_the_cpu_is_the_view_unless_copied() -> None:
    """What ms-swift #10207's receiver relied on (the shm_env bucket receivers): on a CPU
    device `tensor.to(device)` hands back the view of the block itself, so the writer's next
    bucket shows through it; `.to(device, copy=True)` owns its bytes."""
    block = SharedMemory(create=True, size=8)
    try:
        reader = SharedMemory(name=block.name)
        window = torch.frombuffer(reader.buf, dtype=torch.uint8)
        moved, copied = window[:4].to("cpu"), window[:4].to("cpu", copy=True)
        block.buf[:4] = b"\x05\x06\x07\x08"  # the next bucket
        assert moved.tolist() == [5, 6, 7, 8] and copied.tolist() == [0, 0, 0, 0]
        del window, moved
        reader.close()
    finally:
        block.close()
        block.unlink()
