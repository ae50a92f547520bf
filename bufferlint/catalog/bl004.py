"""BL004: a non-blocking device copy reads a borrowed host buffer after the call returns,
and nothing waits for it before the producer refills the buffer."""

from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.catalog.runai import ITERATOR
from bufferlint.hazards import Hazard

_PRELUDE = (
    '''\
"""A model loader fed by the RunAI Model Streamer that overlaps host-to-device copies."""

import torch
from runai_model_streamer import SafetensorsStreamer

RUNAI_STREAMER_TENSOR_ATTR = "_sglang_runai_streamer_tensor"


'''
    + ITERATOR
    + '''\


'''
)

_LOOP = _PRELUDE + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params_dict = dict(model.named_parameters())
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
'''

# A side stream for non-blocking copies, and an event recorded after each one.
_STREAM_LOOP = _PRELUDE + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params_dict = dict(model.named_parameters())
    copy_stream = torch.cuda.Stream()
    copied = torch.cuda.Event()
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        with torch.cuda.stream(copy_stream):
            params_dict[name].data.copy_(loaded_weight, non_blocking=True)
            copied.record()
'''

RULE = Rule(
    code="BL004",
    hazard=Hazard.DEVICE_COPY_READS_HOST,
    name="non-blocking-copy-from-borrowed-view",
    summary="non-blocking device copy from a borrowed view",
    doc='''\
## What it does

Finds asynchronous host-to-device copies whose source borrows a buffer its producer reuses
(zero-copy views such as the tensors yielded by the RunAI Model Streamer, marked with
`_sglang_runai_streamer_tensor`): `param.copy_(w, non_blocking=True)`,
`w.to(device, non_blocking=True)`, `w.cuda(non_blocking=True)`, on the current stream or
under `with torch.cuda.stream(s):`, when nothing waits for the copy
(`torch.cuda.synchronize()`, `stream.synchronize()`, `event.synchronize()`) in the same
iteration, before the producer advances. A synchronisation after the loop comes too late.

## Why is this bad?

A non-blocking copy only enqueues the transfer: the copy engine reads the host memory
later, while Python has already asked the producer for the next tensor and the producer is
refilling the very buffer being copied. The device receives a mix of this tensor's and the
next tensors' bytes. Nothing fails; the model loads with silently corrupted weights, more
often the faster the storage is.

What the torch pack assumes: the race needs a host source the copy engine reads directly,
i.e. pinned (page-locked) memory. From pageable memory CUDA stages the bytes before the call
returns, so the copy is effectively blocking. Streamer buffers are pinned (or device memory
in distributed mode), and whether a view is pinned is not visible in the code, so every
borrowed view is treated as possibly pinned, except views of a buffer the program itself
made as a `bytearray` (or `mmap`) and refills in place (`sock.recv_into(buf)`): that memory
is pageable. A `non_blocking=flag` that is not a constant
counts as possibly true. Blocking copies (`.to("cuda")`, `.cuda()`) own their result and
are never reported; `.pin_memory()` of a view that is already pinned returns that same
tensor ("if it's not already pinned", torch's docs), so its result stays borrowed.

## Example

```python
for name, loaded_weight in runai_safetensors_weights_iterator(files):
    params_dict[name].data.copy_(loaded_weight, non_blocking=True)  # reads the buffer later
```

## Use instead

Copy blocking (the default; under a side stream too: a blocking copy synchronises the stream
it is issued on before it returns), or wait for the copy before the producer advances:

```python
for name, loaded_weight in runai_safetensors_weights_iterator(files):
    params_dict[name].data.copy_(loaded_weight, non_blocking=True)
    torch.cuda.synchronize()  # the copy has read the buffer: the producer may refill it
```

With a side stream, synchronise the stream (or an event recorded after the copies) in the
same iteration. To keep the copies overlapped, have the producer hand out owned tensors
(runai-model-streamer >= 0.17: `streamer.stream_files(files, owned=True)`).

## Fix safety

No fix is offered: where to synchronise (per copy, per layer, per stream) is a performance
decision the analysis cannot make.
''',
    message=(
        "non-blocking device copy `{sink}` reads a borrowed host buffer after the call returns; "
        "synchronise (`torch.cuda.synchronize()` / `stream.synchronize()`) before the producer "
        "advances, or copy with `non_blocking=False`"
    ),
    step_note="copied to the device asynchronously by `{sink}`",
    invalid=(
        Invalid(
            _LOOP
            + '''\
        params_dict[name].data.copy_(loaded_weight, non_blocking=True)
''',
            lines=(22,),
        ),
        # Copies to the device kept in a dict; the synchronisation after the loop is too late.
        Invalid(
            _PRELUDE
            + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params_dict = dict(model.named_parameters())
    on_device = {}
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        on_device[name] = loaded_weight.to("cuda", non_blocking=True)
    torch.cuda.synchronize()
    for name, weight in on_device.items():
        params_dict[name].data = weight
''',
            lines=(23,),
        ),
        Invalid(_STREAM_LOOP, lines=(25,)),
    ),
    valid=(
        Valid(
            _LOOP
            + '''\
        params_dict[name].data.copy_(loaded_weight, non_blocking=True)
        torch.cuda.synchronize()
''',
        ),
        Valid(
            _LOOP
            + '''\
        params_dict[name].data.copy_(loaded_weight)
''',
        ),
        # A blocking copy synchronises the stream it is issued on, a side stream too.
        Valid(
            _LOOP
            + '''\
        with torch.cuda.stream(torch.cuda.Stream()):
            params_dict[name].data.copy_(loaded_weight)
''',
        ),
        Valid(
            _STREAM_LOOP
            + '''\
        copied.synchronize()
''',
        ),
        Valid(
            _PRELUDE
            + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params_dict = dict(model.named_parameters())
    on_device = {}
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        on_device[name] = loaded_weight.to("cuda", non_blocking=True)
        torch.cuda.current_stream().synchronize()
    for name, weight in on_device.items():
        params_dict[name].data = weight
''',
        ),
    ),
)
