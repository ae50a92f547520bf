"""BL005: the host reads a tensor that a non-blocking device-to-host copy is still filling
(no synchronisation between the copy and the read)."""

from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.hazards import Hazard

_PRELUDE = '''\
"""A decode step that fetches sampled token ids from the GPU (condensed from SGLang)."""

import torch


'''

# A helper that starts the copy and hands back the host tensor, still in flight.
_HELPER = _PRELUDE + '''\
def fetch_to_host(next_token_ids: torch.Tensor) -> torch.Tensor:
    return next_token_ids.to("cpu", non_blocking=True)


def process_batch_result(next_token_ids: torch.Tensor) -> list[int]:
    host_ids = fetch_to_host(next_token_ids)
'''

# The decode step itself; the examples differ in the copy and what follows it.
_STEP = _PRELUDE + '''\
def process_batch_result(next_token_ids: torch.Tensor) -> list[int]:
'''
_ASYNC_COPY = '    host_ids = next_token_ids.to("cpu", non_blocking=True)\n'

RULE = Rule(
    code="BL005",
    hazard=Hazard.HOST_READS_IN_FLIGHT,
    name="read-before-device-sync",
    summary="host read of a device-to-host copy still in flight",
    doc='''\
## What it does

Finds host reads of a tensor produced by a non-blocking device-to-host copy
(`t.to("cpu", non_blocking=True)`, `pinned.copy_(gpu, non_blocking=True)`) before anything synchronises with the device
(`torch.cuda.synchronize()`, `stream.synchronize()`, `event.synchronize()`,
`torch.cuda.current_stream().synchronize()`, a helper of the project that does, leaving a
`with` block whose project `__exit__` does). Host reads are the torch pack's `host-reads`
(`.tolist()`, `.item()`, `int(t)`, `print(t)`, `torch.isnan(t)`, `torch.save(t, f)`, NumPy's `.tobytes()`,
a queue's `put`, ...; views such as
`.numpy()` or `t[0]` are in flight too, and their reads count), truth tests (`if t:`), a
store into host memory (`host[:n] = t`) and
handing the tensor to a thread pool or a thread, judged by the function it runs when that is
the project's (one that synchronises before it reads is fine). The whole program is followed: a helper that issues the
copy and returns the host tensor, a helper that reads a tensor it was given before it
synchronises. The trace runs from the copy to the read.

## Why is this bad?

A non-blocking copy from the device only enqueues the transfer on the current CUDA stream and
returns at once, with a host tensor whose memory the copy engine fills later. Reading it on the
CPU before a synchronisation reads whatever the (pinned) memory held before: stale token ids,
zeros, last step's values. Nothing fails, and the read is usually right on an idle GPU, so the
bug shows up under load as wrong outputs. PyTorch's tutorial on pinned memory and
`non_blocking` warns about exactly this.

## Example

```python
def process_batch_result(next_token_ids: torch.Tensor) -> list[int]:
    host_ids = next_token_ids.to("cpu", non_blocking=True)
    return host_ids.tolist()  # the copy may not have landed yet
```

## Use instead

Synchronise between the copy and the first read (or record an event after the copy and
synchronise it), or copy blocking:

```python
def process_batch_result(next_token_ids: torch.Tensor) -> list[int]:
    host_ids = next_token_ids.to("cpu", non_blocking=True)
    torch.cuda.current_stream().synchronize()
    return host_ids.tolist()
```

## Fix safety

When the copy and the read are in the same function, two fixes are offered. Dropping
`non_blocking=True` (copy blocking) is safe: the host tensor holds the same bytes, before the
call returns; only the overlap of the copy with the host's work is lost. Inserting
`torch.cuda.current_stream().synchronize()` before the statement of the read is unsafe: it
waits for all the stream's work, and if the copy was issued on another stream than the
current one, synchronising the current stream is not enough (synchronise that stream, or an
event recorded after the copy). When the copy is issued by a helper or the read happens in
one, no fix is offered: the helper is shared by other callers.

## Known problems

The device and the flag are compared by value: `torch.device("cpu")`, a module constant
holding one, a variable, a parameter's default. A flag that is not known
(`non_blocking=self.non_blocking`) may be true and counts; a device that is not known is taken
as the accelerator's (most `.to(device, non_blocking=True)` copy to the device). The
device callers pass to a helper's parameter is followed, and so is a nested function's
device read from its enclosing call (a closure variable), where that call calls it, itself
or through a helper that returns what its callback returns (`apply_to_collection(batch,
Tensor, batch_to)`); a closure a factory returns and its callers call is not, nor a device
a helper returns. `pinned.copy_(gpu, non_blocking=True)` makes
`pinned` in flight when it is known to be host memory (a CPU allocation in the same function,
or a pinned allocation anywhere in the project, kept in a field of any object); a CPU buffer
made elsewhere is not known to be. Pinned allocations are recognised only in a run that
enables BL006 (the pack key `pinned-allocations` serves that rule alone): without it, a copy
into a pinned buffer kept in a field is not followed. A pinned buffer is in flight through every view of it,
wherever it is kept (`self.arr = self.pinned.numpy()` in another field, another object's
field): a method reading one while another method left a copy filling the buffer is
reported; of one class's buffers, those of objects the program tells apart (two fields each
made by its own construction: see BL006) are not taken for each other. A synchroniser counts as covering every copy, even one on an
unrelated stream, but the current stream's (`torch.cuda.current_stream().synchronize()`,
`default_stream()`, outside a stream context) for a copy issued in the same function under
`with torch.cuda.stream(side):` (a helper's copy on a side stream is taken as covered); an event a task is handed counts as covering what it is handed, and so
does an event recorded after the copy and put on a queue in the same item (`q.put((slot,
ev))`: the getter is taken to wait for it). A copy
kept in an object's attribute by one method and read by another is in flight there until
the reading method synchronises (the order the methods run in is not known: one that only
runs after a synchronisation elsewhere is a false alarm); so is a copy built into a record
kept there (`self.out.ids` of `self.out = Out(ids.to("cpu", non_blocking=True))`). Arithmetic and element-wise
comparisons on the tensor or a NumPy view of it (`t + 1`, `out.numpy() > 0`) are host reads;
`is` and `in` are not.
''',
    message=(
        "`{sink}` reads on the host a tensor that a non-blocking device-to-host copy may still be "
        "filling; synchronise (`torch.cuda.current_stream().synchronize()`, or the copy's stream or "
        "event) before the read, or copy blocking"
    ),
    step_note="read on the host by `{sink}` while the copy may still be in flight",
    source_fix="copy blocking (`non_blocking=False`), or synchronise right after the copy",
    invalid=(
        Invalid(
            _STEP + _ASYNC_COPY + "    return host_ids.tolist()\n",
            lines=(8,),
            fixed=((_ASYNC_COPY, '    host_ids = next_token_ids.to("cpu")\n'),),
        ),
        # A truth test reads the tensor's single value.
        Invalid(
            _PRELUDE
            + '''\
def all_finished(finished: torch.Tensor) -> bool:
    if finished.all().to("cpu", non_blocking=True):
        return True
    return False
''',
            lines=(7,),
        ),
        Invalid(_HELPER + "    return host_ids.tolist()\n", lines=(12,)),
    ),
    valid=(
        Valid(_STEP + _ASYNC_COPY + "    torch.cuda.current_stream().synchronize()\n    return host_ids.tolist()\n"),
        Valid(_STEP + '    host_ids = next_token_ids.to("cpu")\n    return host_ids.tolist()\n'),
        Valid(_HELPER + "    torch.cuda.synchronize()\n    return host_ids.tolist()\n"),
        # Read on the device: the copy back is ordered on the same stream.
        Valid(
            _PRELUDE
            + '''\
def round_trip(next_token_ids: torch.Tensor) -> torch.Tensor:
    host_ids = next_token_ids.to("cpu", non_blocking=True)
    return host_ids.to("cuda")
''',
        ),
    ),
)
