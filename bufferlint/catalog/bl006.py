"""BL006: the program writes a pinned host buffer that a non-blocking host-to-device copy may
still be reading (no host synchronisation between the copy and the write)."""

from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.hazards import Hazard

_PRELUDE = '''\
"""Uploads batches to the GPU through one pinned staging buffer (condensed from vLLM)."""

import torch


'''

_LOOP = _PRELUDE + '''\
def upload(batches: list[torch.Tensor], device_batch: torch.Tensor) -> None:
    staging = torch.empty(device_batch.shape, dtype=device_batch.dtype, pin_memory=True)
    for batch in batches:
'''
_REFILL = "        staging.copy_(batch)\n"
_COPY = "        device_batch.copy_(staging, non_blocking=True)\n"
_SYNC = "        torch.cuda.synchronize()\n"

# The staging buffer kept by the object: each call refills it before the previous call's
# copy is known to be done.
_METHOD = _PRELUDE + '''\
class Uploader:
    def __init__(self, size: int) -> None:
        self.staging = torch.empty(size, dtype=torch.int32, pin_memory=True)
        self.device_ids = torch.empty(size, dtype=torch.int32, device="cuda")

    def upload(self, ids: list[int]) -> None:
'''

RULE = Rule(
    code="BL006",
    preview=True,
    hazard=Hazard.HOST_WRITTEN_IN_FLIGHT,
    name="host-buffer-reused-under-async-copy",
    summary="pinned host buffer written while a host-to-device copy may still read it",
    doc='''\
## What it does

Finds writes to a pinned host buffer (`torch.empty(..., pin_memory=True)`, `t.pin_memory()`:
the torch pack's `pinned-allocations`) while a non-blocking copy to the device may still be
reading it: `gpu.copy_(pinned, non_blocking=True)`, `pinned.to("cuda", non_blocking=True)`,
`pinned.cuda(non_blocking=True)`, or a copy issued under `torch.cuda.stream(...)`, with no
host synchronisation since (`torch.cuda.synchronize()`, `stream.synchronize()`,
`torch.cuda.current_stream().synchronize()`, or `event.synchronize()` of an event recorded
after the copy). Writes are the packs' `host-writes` (`buf.copy_(x)`, `buf.fill_(0)`,
`f.readinto(buf)`, `os.preadv(fd, [buf], offset)`, `numpy.copyto(buf, x)`, `numpy.put(buf, i, v)`,
`struct.pack_into(fmt, buf, 0, ...)`), stores through an
index (`buf[:n] = x`) and in-place operators (`buf += x`), on the buffer or on a view of it
(`buf.numpy()`, `buf[:n]`); a write to a part the copy provably does not read (`buf[n:]`
while it reads `buf[:n]`) is not one. Nor is a non-blocking copy into the buffer from the
device (`buf.copy_(gpu, non_blocking=True)`): the device writes it, queued on the current
stream behind the copies issued there before, which it cannot overtake; it is one when either
copy is issued under `torch.cuda.stream(...)` (another queue) or it copies from host memory
(the host copies at once). The write may come in the next iteration of a loop,
through a slot of a pool of pinned buffers, or in the next call of a method that keeps the
buffer in a field of its object. The trace runs from the allocation to the copy and the write.

## Why is this bad?

A non-blocking copy from pinned memory only enqueues the transfer: the call returns at once,
and the copy engine reads the host buffer later, when the stream gets to it. Refilling the
buffer before then sends the device the next batch's bytes (or a mix of both) instead of this
one's. Nothing fails: the model silently trains or decodes on wrong data, more often under
load. `event.wait()` and `stream.wait_event(e)` do not help: they order later *device* work
and the host goes on at once. A copy from pageable (unpinned) memory is staged by the driver
before the call returns, so only pinned buffers are at risk.

## Example

```python
staging = torch.empty(n, pin_memory=True)
for batch in batches:
    staging.copy_(batch)  # the previous iteration's copy may still read `staging`
    device_batch.copy_(staging, non_blocking=True)
```

## Use instead

Wait on the host for the copy before the buffer is written again (an event recorded after
the copy is enough), or use one buffer per copy in flight:

```python
staging = torch.empty(n, pin_memory=True)
copied = torch.cuda.Event()
for batch in batches:
    copied.synchronize()
    staging.copy_(batch)
    device_batch.copy_(staging, non_blocking=True)
    copied.record()
```

## Fix safety

The fix inserts `torch.cuda.synchronize()` on its own line before the statement that writes
the buffer, when `torch` is imported there. It is unsafe: the host then waits for all the
device's queued work, not just for the copy, which serialises the pipeline the non-blocking
copy was meant to overlap (an event recorded after the copy, synchronised before the write, is
usually what is wanted), and a copy issued to another device than the current one is not
covered. No fix is offered for a write in a `while` or `elif` test.

## Known problems

BL006 is a preview rule: it runs only when selected by its code (`extend-select = ["BL006"]`
in the configuration, or `--extend-select BL006`), because on real code what it reports
today is mostly one of the cross-call false alarms below: on sglang 0.5.16-0.5.23 and vLLM
0.33.0 every finding left is a buffer kept in a field and reported at the next call (an
object made anew for each step, a caller that synchronises between calls, two buffers taken
in turn).

A buffer the object keeps in a field is followed across calls of one method: the next call
on the same object is taken to come with no host synchronisation in between, unless every
call of the method the analysis sees is made after its caller synchronised on the host (an
event synchronised before the input preparation, as vLLM's runner does): then the method is
not reported. A caller the analysis does not resolve (a parameter of no known class calling
the method) is not seen, and a caller that synchronises once and then calls the method twice
is taken as synchronised for both calls (a missed bug). Two shapes are safe for reasons
outside the method, and reported: each call runs on a new object (the engine makes one per
step), whose buffers are new; the method takes two (or N) buffers in turn
(`bufs[self.turn]`, `self.turn = 1 - self.turn`) and the caller synchronises at least every N
calls, or bounds the steps in flight to N elsewhere (vLLM's block zeroer). A copy
issued by one method and the write made by another method are not paired (no call order
between methods is known). A helper that writes the buffer it is given before it
synchronises is followed (the finding is at the call); a helper that issues the copy is not.
A copy from the device into the buffer is taken as queued behind the copies the same function
issued on the current stream; one a callee issued (on a stream not known here) is taken to race
it, and a copy from the device into a buffer kept for the next call or passed in is not judged
against the copies of the next call or of the caller.

Parts of one buffer are told apart when they are provably disjoint: constant bounds that do
not meet (`buf[:8]`, `buf[8:]`, rows `buf[0]` and `buf[1]`), or one bound ending one part and
starting the other (`buf[:n]`, `buf[n:]`, in any dimension) over names bound once in the
function and outside loops. Anything else is taken to overlap: a bound over a name bound
again (a loop variable), an attribute or a call, a negative constant, a step, an index by a
variable (it may be a tensor of indices or a mask), a part of a view made otherwise than by
a subscript (`buf.t()[n:]`), and across calls any bound that is not a constant (the next
call's `n` is another value). A pool of pinned buffers is one buffer to the analysis: a loop
that synchronises every N iterations and cycles through at least N slots is reported though
no byte a copy reads is written.

A class's buffers are allocated at one line of the class for all its objects; the objects
are told apart where the program makes them: a local `Buf(n)` at its own call, and an
object kept in a field every store of which constructs one (`self.a = Buf(n)`, or a method
of the class returning `Buf(...)`), so writing `self.b`'s buffer while a copy reads
`self.a`'s is not reported. An object stored otherwise (another field's object, a
parameter), stored from outside its class, or reached through the receiver's own field
inside the buffer's class (`self.cpu`) is any object of its class: its buffer is taken to
be every other's. Two objects made by one store (a loop, a method called twice) are one.

A pinned buffer moved to the accelerator (`buf.to(device)`, `buf.cuda()`: the pack's
`device-moves`) is new device memory, not the buffer, and a `.to(x)` whose argument is not
known is taken as such a move (a no-op `.to` of the buffer's own dtype is missed); a move to
the host (`buf.cpu()`, `buf.to("cpu")`) is the buffer itself.

Only buffers the analysis sees allocated pinned are tracked: a parameter or a buffer made by
a library is taken as not pinned (its copy would be synchronous), so a staging buffer that a
caller passes in is not reported. Memory pinned outside the caching host allocator
(`cudaHostRegister` of a NumPy array or shared memory) is not recognised. Dropping or rebinding
a pinned temporary is never reported: PyTorch's caching host allocator records the copy's
event and does not hand the block out again before the copy completes. Cross-stream
lifetimes of device memory (`record_stream`) are out of scope.
''',
    message=(
        "`{sink}` writes a pinned host buffer that a non-blocking copy to the device may still be "
        "reading; synchronise on the host (`torch.cuda.synchronize()`, the copy's stream, or an event "
        "recorded after the copy) before the write, or give each copy in flight its own buffer"
    ),
    step_note="written by `{sink}` while the copy to the device may still be reading it",
    source_fix="synchronise on the host before each reuse of the buffer, or give each copy in flight its own buffer",
    invalid=(
        Invalid(
            _LOOP + _REFILL + _COPY,
            lines=(9,),
            fixed=((_REFILL, _SYNC + _REFILL),),
        ),
        Invalid(
            _METHOD + "        self.staging[: len(ids)] = torch.tensor(ids, dtype=torch.int32)\n"
            "        self.device_ids.copy_(self.staging, non_blocking=True)\n",
            lines=(12,),
        ),
        # A device-side wait orders later device work; the host does not wait.
        Invalid(
            _LOOP + _REFILL + _COPY.replace("        device_batch", "        ready = torch.cuda.Event()\n        device_batch")
            + "        ready.record()\n        torch.cuda.current_stream().wait_event(ready)\n",
            lines=(9,),
        ),
    ),
    valid=(
        Valid(_LOOP + _REFILL + _COPY + _SYNC),
        # Pageable memory: the copy is staged before the call returns.
        Valid(_LOOP.replace(", pin_memory=True", "") + _REFILL + _COPY),
        # An event recorded after the copy, waited for on the host before the next refill.
        Valid(
            _LOOP.replace("    for batch", "    copied = torch.cuda.Event()\n    for batch")
            + "        copied.synchronize()\n" + _REFILL + _COPY + "        copied.record()\n"
        ),
        # A pinned temporary per batch: the caching host allocator keeps each block until its
        # copy is done.
        Valid(
            _PRELUDE
            + '''\
def upload(batches: list[torch.Tensor], device_batch: torch.Tensor) -> None:
    for batch in batches:
        device_batch.copy_(batch.pin_memory(), non_blocking=True)
'''
        ),
        # The copy reads the first `n` elements; the write is to the rest.
        Valid(
            _PRELUDE
            + '''\
def upload(head: torch.Tensor, tail: torch.Tensor, device: torch.Tensor, n: int) -> None:
    staging = torch.empty(device.shape, dtype=device.dtype, pin_memory=True)
    staging[:n] = head
    device[:n].copy_(staging[:n], non_blocking=True)
    staging[n:] = tail
    device[n:].copy_(staging[n:], non_blocking=True)
'''
        ),
        Valid(
            _METHOD + "        torch.cuda.current_stream().synchronize()\n"
            "        self.staging[: len(ids)] = torch.tensor(ids, dtype=torch.int32)\n"
            "        self.device_ids.copy_(self.staging, non_blocking=True)\n",
        ),
    ),
)
