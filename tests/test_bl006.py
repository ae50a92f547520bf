"""BL006 (a pinned host buffer written while a copy to the device may still read it): the fix on
the fixture corpus's shapes, the trace of a finding, and the torch behaviour the pack keys
``pinned-allocations`` and ``host-writes`` rest on, checked on the real torch CPU build."""

from __future__ import annotations

import difflib
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.fixes import base as fix_base
from bufferlint.fixes import bl006
from bufferlint.fixes.apply import apply_edits
from bufferlint.packs import builtin_vocabulary

FIXTURE = Path(__file__).parent / "fixtures" / "analysis" / "host_reuse.py"


def analysed(tmp_path: Path):
    path = tmp_path / FIXTURE.name
    shutil.copy(FIXTURE, path)
    vocab = builtin_vocabulary()
    return path, vocab, analyze_project(tmp_path, [path], [path], vocab)


def test_fix_inserts_a_host_synchronisation_before_the_write(tmp_path: Path) -> None:
    path, vocab, result = analysed(tmp_path)
    text = path.read_text(encoding="utf-8")
    context = fix_base.FixContext(fix_base.Project(tmp_path, vocab, [path]), path)
    fixes = {}
    for finding in result.findings:
        planned = bl006.candidates(finding, text, context)
        fixes[finding.span.line] = [
            (fix.applicability, [line[2:] for line in difflib.ndiff(text.splitlines(), apply_edits(text, fix.edits).splitlines()) if line.startswith("+ ")])
            for fix in planned
        ]
    assert fixes[15] == [("unsafe", ["        torch.cuda.synchronize()"])]
    assert fixes[46] == [("unsafe", ["    torch.cuda.synchronize()"])]
    # The next call's write, in the method that keeps the buffer: the sync goes before it.
    assert fixes[92] == [("unsafe", ["        torch.cuda.synchronize()"])]


def test_the_trace_runs_from_the_allocation_to_the_copy_and_the_write(tmp_path: Path) -> None:
    _, _, result = analysed(tmp_path)
    by_line = {f.span.line: f for f in result.findings}
    loop = [step.note for step in by_line[15].trace]
    assert "allocates pinned host memory" in loop[0]
    assert "copies it to the device asynchronously" in loop[1]
    assert loop[-1].startswith("written by `staging.copy_`")
    method = [step.note for step in by_line[92].trace]
    assert "kept in `self.staging`" in method
    assert any("returns with the copy still reading it" in note for note in method)
    assert method[-1] == "the next call writes it before any synchronisation"
    assert "(`pin` may be True)" in by_line[80].trace[0].note  # a flag not known may pin
    assert by_line[15].function == "host_reuse:refilled_next_iteration"


def test_the_safe_twins_are_silent(tmp_path: Path) -> None:
    _, _, result = analysed(tmp_path)
    functions = {f.function.rsplit(":", 1)[1] for f in result.findings}
    for safe in (
        "refilled_after_a_sync", "pageable_staging", "pinned_temporary_per_batch", "blocking_copy", "host_to_host",
        "SyncedUploader.upload", "EventUploader.upload", "pool_with_an_event_per_slot",
        "event_recorded_after_the_copy", "polled_until_done",
    ):
        assert safe not in functions


# -- the torch behaviour the pack keys rest on (CPU build: no accelerator) ------------------

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only build")
def test_pinned_memory_needs_an_accelerator_to_run_but_not_to_analyse() -> None:
    """The analysis reads `pin_memory=True` from the text; running it on a CPU-only build fails,
    so BL006 is checked statically on machines without a GPU."""
    with pytest.raises(RuntimeError, match="pin"):
        torch.empty(4, pin_memory=True)


def _receiver_writes() -> list[str]:
    specs = [spec for spec in builtin_vocabulary().host_writes if spec.writes == "receiver"]
    return sorted({pattern.method for spec in specs for pattern in spec.calls if pattern.method})


@pytest.mark.parametrize("method", _receiver_writes())
def test_each_receiver_write_changes_its_receiver_in_place(method: str) -> None:
    """Every method the packs list as writing its receiver does, on a host tensor (or, for
    NumPy's `fill`, on an array viewing one): the bytes change and the object stays."""
    tensor = torch.arange(1.0, 9.0)
    before = tensor.clone()
    index = torch.tensor([0, 1])
    calls = {
        "copy_": lambda t: t.copy_(torch.zeros(8)),
        "fill_": lambda t: t.fill_(0.5),
        "zero_": lambda t: t.zero_(),
        "normal_": lambda t: t.normal_(),
        "uniform_": lambda t: t.uniform_(),
        "random_": lambda t: t.random_(100, 200),
        "bernoulli_": lambda t: t.bernoulli_(torch.full((8,), 0.0)),
        "exponential_": lambda t: t.exponential_(),
        "index_copy_": lambda t: t.index_copy_(0, index, torch.zeros(2)),
        "index_fill_": lambda t: t.index_fill_(0, index, 0.0),
        "index_put_": lambda t: t.index_put_((index,), torch.zeros(2)),
        "index_add_": lambda t: t.index_add_(0, index, torch.ones(2)),
        "masked_fill_": lambda t: t.masked_fill_(t > 4, 0.0),
        "masked_scatter_": lambda t: t.masked_scatter_(t > 4, torch.zeros(8)),
        "scatter_": lambda t: t.scatter_(0, index, torch.zeros(2)),
        "scatter_add_": lambda t: t.scatter_add_(0, index, torch.ones(2)),
        "scatter_reduce_": lambda t: t.scatter_reduce_(0, index, torch.zeros(2), "prod"),
        "put_": lambda t: t.put_(index, torch.zeros(2)),
        "add_": lambda t: t.add_(1),
        "sub_": lambda t: t.sub_(1),
        "mul_": lambda t: t.mul_(3),
        "div_": lambda t: t.div_(2),
        "clamp_": lambda t: t.clamp_(max=2),
        "lerp_": lambda t: t.lerp_(torch.zeros(8), 0.5),
        "addcmul_": lambda t: t.addcmul_(torch.ones(8), torch.ones(8)),
        "addcdiv_": lambda t: t.addcdiv_(torch.ones(8), torch.ones(8)),
        "pow_": lambda t: t.pow_(2),
        "sqrt_": lambda t: t.sqrt_(),
        "neg_": lambda t: t.neg_(),
        "exp_": lambda t: t.exp_(),
        "log_": lambda t: t.log_(),
        "round_": lambda t: t.round_(decimals=-1),
        "clamp_min_": lambda t: t.clamp_min_(5),
        "clamp_max_": lambda t: t.clamp_max_(2),
        "index_reduce_": lambda t: t.index_reduce_(0, index, torch.zeros(2), "prod"),
        "fill": lambda t: t.numpy().fill(0),
    }
    assert method in calls, f"add a call of `.{method}` here"
    returned = calls[method](tensor)
    assert returned is None or returned is tensor
    assert not torch.equal(tensor, before)


def test_readinto_and_preadv_write_through_a_numpy_view_of_the_tensor() -> None:
    """`f.readinto(buf.numpy())` and `os.preadv(fd, [buf.numpy()], 0)` fill the tensor itself:
    the view shares its memory, so a write through it is a write of the pinned buffer."""
    tensor = torch.zeros(4, dtype=torch.uint8)
    io.BytesIO(b"\x01\x02\x03\x04").readinto(tensor.numpy())
    assert tensor.tolist() == [1, 2, 3, 4]
    if not hasattr(os, "preadv"):
        pytest.skip("os.preadv is not available here")
    with tempfile.TemporaryFile() as f:
        f.write(b"\x05\x06\x07\x08")
        f.flush()
        os.preadv(f.fileno(), [tensor.numpy()], 0)
    assert tensor.tolist() == [5, 6, 7, 8]


def test_numpy_writes_and_from_numpy_alias_the_same_memory() -> None:
    """`numpy.copyto(view, x)`, `view[:] = x` and a tensor from `torch.from_numpy` all reach
    the same bytes: views keep the buffer's identity in the analysis for this reason."""
    tensor = torch.zeros(3)
    view = tensor.numpy()
    np.copyto(view, np.ones(3, dtype=np.float32))
    assert tensor.tolist() == [1.0, 1.0, 1.0]
    array = np.zeros(3, dtype=np.float32)
    shared = torch.from_numpy(array)
    array[:] = 2
    assert shared.tolist() == [2.0, 2.0, 2.0]
