"""BL001: a borrowed value (a zero-copy view of a buffer its producer reuses) is handed to
an async consumer that may read it after the producer has refilled the buffer."""

from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.catalog.runai import ITERATOR
from bufferlint.hazards import Hazard

_PRELUDE = (
    '''\
"""A model loader fed by the RunAI Model Streamer (condensed from SGLang)."""

from concurrent.futures import ThreadPoolExecutor

import torch
from runai_model_streamer import SafetensorsStreamer

RUNAI_STREAMER_TENSOR_ATTR = "_sglang_runai_streamer_tensor"


'''
    + ITERATOR
    + '''\


def copy_into(param: torch.nn.Parameter, weight: torch.Tensor) -> None:
    param.data.copy_(weight)


'''
)

# The loader's loop up to the point where each example consumes `w` its own way.
_LOOP = _PRELUDE + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with ThreadPoolExecutor(max_workers=8) as executor:
        for name, w in runai_safetensors_weights_iterator(files):
'''

RULE = Rule(
    code="BL001",
    hazard=Hazard.ASYNC_READ_AFTER_ADVANCE,
    name="borrowed-value-to-async-sink",
    summary="borrowed value reaches an async sink without a guard",
    doc='''\
## What it does

Finds values that borrow a buffer their producer reuses (zero-copy views such as the
tensors yielded by the RunAI Model Streamer, marked with `_sglang_runai_streamer_tensor`)
that are passed to an async consumer (`Executor.submit`, `threading.Thread`,
`loop.run_in_executor`, `Pool.apply_async`, ...) when nothing makes the consumer finish
before the producer advances: no copy, no check of the marker, no wait on the result.

The producers, markers, copies and consumers come from the rule packs
(`bufferlint check --show-settings` lists the vocabulary in effect and where each entry
comes from); `[tool.bufferlint]` adds your own.

## Why is this bad?

The consumer runs later, on another thread. By then the producer has handed out the next
value and overwritten the buffer the view points into, so the consumer reads the wrong
data. Nothing fails: the model loads with silently corrupted weights, and only when the
timing is unlucky (fast storage makes it likelier, a debugger or extra logging hides it).

## Example

```python
with ThreadPoolExecutor(max_workers=8) as executor:
    for name, w in runai_safetensors_weights_iterator(files):
        executor.submit(copy_into, params[name], w)  # w's buffer is refilled next iteration
```

## Use instead

Consume borrowed values before the producer advances: copy them (`w.clone()`), load
marked values synchronously, or wait for the submitted work in the same iteration.

```python
with ThreadPoolExecutor(max_workers=8) as executor:
    for name, w in runai_safetensors_weights_iterator(files):
        if getattr(w, "_sglang_runai_streamer_tensor", False):
            copy_into(params[name], w)  # synchronous: done before the buffer is reused
            continue
        executor.submit(copy_into, params[name], w)
```

## Fix safety

Where the consumer can go through a guard the pack names, the fix binds the guard to the
borrowed value: `maybe_executor_submit(..., use_async=should_async_load(w))`, or
`if should_async_load(w): executor.submit(f, w)` with an inline call otherwise. That is
**safe**: it only changes which values are loaded synchronously. The other fixes are
**unsafe** (`--unsafe-fixes`): `executor.submit(f, w)` becomes
`bufferlint.runtime.guarded_submit(executor, f, w)` (a run-time dependency, and marked
values run inline), and every other hand-off gets a copy of the value with its kind's copy
method (`Thread(target=f, args=(w.clone(),))`, `loop.run_in_executor(None, f, w.clone())`,
`executor.map(f, (w.clone() for w in ws))`), which costs one copy of each value. A call
a guard decides (its switch is the guard's verdict on the value, or an `if guard(w):` leads
to it) whose guard BL002 reports is not reported here: one finding per bug, the guard's,
which names the call in its trace and whose fix removes the hazard. Such a call is reported
(with no fix of its own) when BL002 is not selected or the guard's file is not checked.
Every fix is re-verified by analysing the fixed project before anything is written.

## Known problems

`map(fn, stream)` calls `fn` with each element, and is analysed as if it made every call at
once (as `list(map(...))` does): a lazy `map` whose results are waited one at a time as it
is iterated (`for f in map(submit, ws): f.result()`) is reported although it is safe.

Calls the analysis cannot resolve (an unknown callable given the value) are assumed not to
keep it, so a helper outside the project that forwards to a pool is not reported.

A method called on a receiver of unknown type (`model.load_weights(weights)`) is taken to
run the methods of that name whose class the calling module can have loaded: through its
imports, or a registry on the way that imports a package's modules by name (every method of
that name when none is loaded). A class the caller never imports, whose object is built
elsewhere and handed in, is not followed when a loaded class has the method.

A closure that keeps the future of its submission in a list of its enclosing call
(`inflight.append(pool.submit(fn, w))` in a function a factory returns) is reported at that
submission even when its caller waits for every future in the list before the producer
advances: the closure's analysis does not know which of the caller's names holds the list.

A hand-off decided by a guard of another kind (a `[[guards]]` entry of kind A asked about
a value of kind B) is reported, but gets no fix: the guard-based fixes treat a call a
configured guard decides as the guard's problem (BL002), and a guard the tree does not
define has no BL002.
''',
    message=(
        "borrowed buffer view reaches async sink `{sink}` without a guard; its producer may reuse "
        "the buffer before the task reads it (consume it synchronously when it carries the marker, "
        "copy it ({copy}), or wait for the task before the producer advances)"
    ),
    step_note="consumed asynchronously by `{sink}`",
    invalid=(
        Invalid(
            _LOOP
            + '''\
            executor.submit(copy_into, params[name], w)
''',
            lines=(29,),
            fixed=(
                (
                    "from runai_model_streamer import SafetensorsStreamer\n",
                    "from runai_model_streamer import SafetensorsStreamer\nfrom bufferlint.runtime import guarded_submit\n",
                ),
                ("executor.submit(copy_into,", "guarded_submit(executor, copy_into,"),
            ),
        ),
        # The loader gets the iterator from its caller, and waits only after the loop:
        # by then the streamer has refilled the buffer many times.
        Invalid(
            _PRELUDE
            + '''\
def load_weights(model: torch.nn.Module, weights, executor: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures = []
    for name, w in weights:
        futures.append(executor.submit(copy_into, params[name], w))
    for future in futures:
        future.result()


def load_model(model: torch.nn.Module, files: list[str]) -> None:
    with ThreadPoolExecutor(max_workers=8) as executor:
        load_weights(model, runai_safetensors_weights_iterator(files), executor)
''',
            lines=(29,),
        ),
    ),
    valid=(
        Valid(
            _LOOP
            + '''\
            executor.submit(copy_into, params[name], w.clone())
''',
        ),
        Valid(
            _LOOP
            + '''\
            if getattr(w, RUNAI_STREAMER_TENSOR_ATTR, False):
                copy_into(params[name], w)
                continue
            executor.submit(copy_into, params[name], w)
''',
        ),
        Valid(
            _LOOP
            + '''\
            executor.submit(copy_into, params[name], w).result()
''',
        ),
    ),
)
