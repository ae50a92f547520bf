"""BL002: a guard (a predicate that decides whether a value may go to an async consumer)
sees borrowed values but never checks the marker that identifies them."""

from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.catalog.runai import ITERATOR
from bufferlint.hazards import Hazard

# The examples are one module standing in for sglang/srt/model_loader/utils.py, so that
# its functions are the guard and the sink the runai-streamer pack names.
_PATH = "sglang/srt/model_loader/utils.py"

_HEAD = (
    '''\
"""Weight-loading helpers (condensed from sglang/srt/model_loader/utils.py and weight_utils.py)."""

import concurrent.futures
from typing import Any, Callable, Iterable, Optional

import torch
from runai_model_streamer import SafetensorsStreamer

RUNAI_STREAMER_TENSOR_ATTR = "_sglang_runai_streamer_tensor"


'''
    + ITERATOR
    + '''\


'''
)

_TAIL = '''\


def maybe_executor_submit(
    *,
    executor: concurrent.futures.ThreadPoolExecutor,
    futures: list[concurrent.futures.Future],
    use_async: bool,
    func: Callable[..., Any],
    func_args: Iterable[Any] = (),
    func_kwargs: Optional[dict[str, Any]] = None,
) -> None:
    """Run func(*func_args, **func_kwargs) on the executor when use_async, else inline."""
    if func_kwargs is None:
        func_kwargs = {}
    if use_async:
        futures.append(executor.submit(func, *func_args, **func_kwargs))
    else:
        func(*func_args, **func_kwargs)


def weight_loader(param: torch.nn.Parameter, weight: torch.Tensor) -> None:
    param.data.copy_(weight)


def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futures: list[concurrent.futures.Future] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as executor:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(
                executor=executor,
                futures=futures,
                use_async=should_async_load(w),
                func=weight_loader,
                func_args=(params[name], w),
            )
        concurrent.futures.wait(futures)
'''

RULE = Rule(
    code="BL002",
    hazard=Hazard.GUARD_APPROVES_MARKED,
    name="guard-ignores-marker",
    summary="guard ignores the borrowed-value marker",
    doc='''\
## What it does

Finds guards (the predicates a rule pack names, such as SGLang's `should_async_load`,
that decide whether a value may be consumed asynchronously) that receive borrowed values
but never look at the marker attribute that identifies them (for the RunAI Model Streamer,
`_sglang_runai_streamer_tensor`). The finding points at the guard's `def` line; the trace
names each call where a borrowed value it approves is consumed asynchronously. Those calls
are not reported again under BL001: the guard is where the fix belongs (with BL002 not
selected, they are).

## Why is this bad?

Every caller trusts the guard to keep borrowed values off the thread pool. A guard that
decides on something else (here: "CPU tensors are loaded asynchronously") sends zero-copy
views of a reused buffer to a worker thread that reads them after the producer has
refilled the buffer, so weights are silently corrupted in every loader that calls it.

## Example

```python
def should_async_load(weight: torch.Tensor) -> bool:
    return weight.device.type == "cpu"
```

## Use instead

Check the marker first, so marked values are always consumed synchronously:

```python
def should_async_load(weight: torch.Tensor) -> bool:
    if getattr(weight, "_sglang_runai_streamer_tensor", False):
        return False
    return weight.device.type == "cpu"
```

## Fix safety

The fix inserts a check of the marker of the guard's kind (the kind its `[[guards]]` entry
names in the pack) as the guard's first statement:
`if getattr(weight, "<marker>", False): return False`. It is **safe**: it only sends
marked values down the synchronous path the guard already has. No fix is offered when the
guard's kind cannot be told (a function only used as a guard, with several marked kinds
configured).

## Known problems

A guard is judged by evaluating its body on a value that carries its kind's marker (and no
other marker): constants and module-level tuples are folded, loops over them unrolled,
`getattr`, `hasattr`, attribute access, `any`/`all`, `match`, `try`/`except
AttributeError`, helpers and `super()` calls followed. It is reported when some path
returns a true value for that marked value without having looked at anything that depends
on the marker. A guard that raises for marked values rejects them. When the evaluation
cannot decide (the marker's name is computed at run time, `getattr(w, name)` with a `name`
it cannot fold, `vars(w)`, a helper it could not decide, more than 2,000 steps or 64 paths
at once), the guard is **not** reported, a notice names it, and the calls it decides are
not taken as guarded either (their BL001 stay): an undecided guard neither raises an alarm
nor silences one. Library calls given the marked value are taken as not reading the
marker (unless they are also given a marker's name: undecided), and so are calls that may
reach more than 8 of the project's functions (a method called by name). An override of a
guard method in a project subclass is judged as a guard too (the base's `self.guard(w)`
may run it), but the base's call is not yet reported for the subclass's instances. So is a
function a class holds as `guard = staticmethod(f)` and one its subclasses hold or define
instead (a plain `guard = f` attribute is not followed: an instance binds it as a method).
A project predicate is used as a guard when its result is an async consumer's switch
(`use_async=guard(w)`), when `if guard(w):` leads to a consumer of `w`, or when it is passed
to a helper whose `if decide(w):` of that parameter does (each call decided by the function
it passes; a lambda passed so decides nothing yet); it is judged at the parameter the
borrowed value is passed to (a check of the marker on another argument approves it). Not
yet when the result is kept in a variable first (`ok = guard(w)`), or tested on a parameter
of a function whose callers pass the borrowed value.
`isinstance(w, C)` and a class pattern `case C():` check the marker when the kind declares
`C` in `marked-classes` (a wrapper class every instance of which carries the marker); of any
other class (`torch.Tensor`) they are independent of the marker, and they hold for every value
asked about when the guard's parameter is annotated as that class (`def g(w: torch.Tensor)`:
`case torch.Tensor(_marker=True)` is then a marker check). A subclass of a marked class is not
recognised unless it is declared too.

A guard whose kind has no markers (the shipped
`numpy` kind) cannot be checked that way and is taken at its word. A function only used as
a guard names no kind, so a check of any marker is accepted for it; what it protects still
follows the kinds: a check of one kind's marker protects no value of another kind (BL001
at the hand-off).
''',
    message=(
        "guard `{sink}` does not return False for values marked {marker}: borrowed views it "
        "approves are consumed asynchronously while their producer reuses the buffer"
    ),
    step_note="`{sink}` never checks {marker}",
    fix_reaches_callers=True,
    invalid=(
        Invalid(
            _HEAD
            + '''\
def should_async_load(weight: torch.Tensor) -> bool:
    """Load host tensors on the thread pool to overlap host-to-device copies."""
    return weight.device.type == "cpu"
'''
            + _TAIL,
            lines=(22,),
            fixed=(
                (
                    '''    """Load host tensors on the thread pool to overlap host-to-device copies."""
''',
                    '''    """Load host tensors on the thread pool to overlap host-to-device copies.

    Values marked `_sglang_runai_streamer_tensor` are zero-copy views into a
    reused buffer. They must be consumed synchronously before their producer
    refills it.
    """
    if getattr(weight, RUNAI_STREAMER_TENSOR_ATTR, False):
        return False

''',
                ),
            ),
            path=_PATH,
        ),
    ),
    valid=(
        Valid(
            _HEAD
            + '''\
def should_async_load(weight: torch.Tensor) -> bool:
    """Load host tensors on the thread pool, except views of a reused buffer."""
    if getattr(weight, "_sglang_runai_streamer_tensor", False):
        return False
    return weight.device.type == "cpu"
'''
            + _TAIL,
            path=_PATH,
        ),
        Valid(
            _HEAD
            + '''\
def should_async_load(weight: torch.Tensor) -> bool:
    return weight.device.type == "cpu" and not getattr(weight, RUNAI_STREAMER_TENSOR_ATTR, False)
'''
            + _TAIL,
            path=_PATH,
        ),
        Valid(
            _HEAD
            + '''\
BORROWED_MARKERS = (RUNAI_STREAMER_TENSOR_ATTR, "_other_streamer_view")


def should_async_load(weight: torch.Tensor) -> bool:
    for marker in BORROWED_MARKERS:
        if getattr(weight, marker, False):
            return False
    return weight.device.type == "cpu"
'''
            + _TAIL,
            path=_PATH,
        ),
    ),
)
