"""BL003: a borrowed value (a zero-copy view of a buffer its producer reuses) is kept beyond
the step in which it is valid: stored where it survives the next iteration, aliased into a
long-lived object, materialised with every other element of its stream, or returned after
its loop moved on."""

from bufferlint.catalog.rule import Invalid, Rule, Valid
from bufferlint.catalog.runai import ITERATOR
from bufferlint.hazards import Hazard

_PRELUDE = (
    '''\
"""A model loader fed by the RunAI Model Streamer (condensed from SGLang and vLLM)."""

import torch
from runai_model_streamer import SafetensorsStreamer

RUNAI_STREAMER_TENSOR_ATTR = "_sglang_runai_streamer_tensor"


'''
    + ITERATOR
    + '''\


'''
)

# `<STORE>` is where the valid examples clone (the invalid ones keep the view).

# DeepSeek-V2/V3 and Kimi fuse q_a_proj and kv_a_proj_with_mqa into one parameter: the
# first half is cached until the second arrives, many tensors later.
_FUSED_A_PROJ = _PRELUDE + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params_dict = dict(model.named_parameters())
    cached_a_proj = {}
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        if "q_a_proj" in name or "kv_a_proj_with_mqa" in name:
            cached_a_proj[name] = loaded_weight<STORE>
            q_name = name.replace("kv_a_proj_with_mqa", "q_a_proj")
            kv_name = q_name.replace("q_a_proj", "kv_a_proj_with_mqa")
            if q_name in cached_a_proj and kv_name in cached_a_proj:
                fused = torch.cat([cached_a_proj.pop(q_name), cached_a_proj.pop(kv_name)], dim=0)
                params_dict[q_name.replace("q_a_proj", "fused_qkv_a_proj_with_mqa")].data.copy_(fused)
            continue
        params_dict[name].data.copy_(loaded_weight)
'''

# vLLM's fp8 loaders: a weight waits in `pending` until its scale arrives (or the reverse).
_PENDING_FP8 = _PRELUDE + '''\
def load_weights(model: torch.nn.Module, files: list[str]) -> None:
    params_dict = dict(model.named_parameters())
    pending = {}
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        base, _, kind = name.rpartition(".")
        pending.setdefault(base, {})[kind] = loaded_weight<STORE>
        pair = pending[base]
        if "weight" in pair and "weight_scale" in pair:
            del pending[base]
            params_dict[base + ".weight"].data.copy_(pair["weight"].float() * pair["weight_scale"])
'''

RULE = Rule(
    code="BL003",
    hazard=Hazard.KEPT_PAST_STEP,
    name="borrowed-view-outlives-step",
    summary="borrowed view outlives its step",
    doc='''\
## What it does

Finds values that borrow a buffer their producer reuses (zero-copy views such as the
tensors yielded by the RunAI Model Streamer, marked with `_sglang_runai_streamer_tensor`)
that are kept after the producer has moved on:

- stored in a container or attribute that lives across iterations
  (`cache[name] = w`, `self.tensors[name] = w`, `kept.append(w)`,
  `pending.setdefault(base, {})["weight"] = w`), a batch emptied only when full included
  (`batch.append(w)`, then `if len(batch) == n: flush(batch); batch = []`);
- bound to a local the next iteration reads before binding it again (`prev = w` in a
  sliding window, `kept = kept + [w]`);
- aliased into a long-lived object (`param.data = w`, `module.weight = nn.Parameter(w)`);
- materialised together with the rest of their stream (`list(weights)`, `dict(...)`,
  `sorted(...)`, `tuple(...)`, `[*weights]`);
- returned after their loop moved on (`last = w` in the loop, `return last` after it);
- read after their producer may have refilled the buffer (`view = ring.read(0)`,
  `ring.release(0)`, then `parse(view)`: a pack source's `advances` call). A view read
  through a container it was put in (`views.append(ring.read(i))`), or that container
  returned (`return views`), is reported once, at that store, with the release and the
  read or the return as steps of its trace.

A container that is emptied in the same iteration (`cache.pop(name)`, `group.clear()`), a
copy into existing storage (`buffer[i, :] = w`) and an owned copy (`w.clone()`,
`torch.cat(...)`) are not reported.

## Why is this bad?

The view is only valid until the producer hands out its next value: then the buffer it
points into is refilled with other tensors' bytes. Whatever was kept now reads the wrong
data, with no error. Caches that wait for a partner tensor (DeepSeek's and Kimi's fused
`q_a_proj`/`kv_a_proj_with_mqa`, vLLM's fp8 weight/scale pairs) and loaders that call
`list(weights)` to look ahead load silently corrupted weights; parameters aliased to the
buffer change whenever the streamer reads on.

## Example

```python
cached_a_proj = {}
for name, loaded_weight in runai_safetensors_weights_iterator(files):
    if "q_a_proj" in name or "kv_a_proj_with_mqa" in name:
        cached_a_proj[name] = loaded_weight  # refilled before its partner arrives
```

## Use instead

Clone at the store, so what is kept owns its memory (`bufferlint check --fix
--unsafe-fixes` does this; it costs one copy of each kept tensor):

```python
cached_a_proj = {}
for name, loaded_weight in runai_safetensors_weights_iterator(files):
    if "q_a_proj" in name or "kv_a_proj_with_mqa" in name:
        cached_a_proj[name] = loaded_weight.clone()
```

Or have the producer hand out owned tensors, so nothing needs a copy: with
runai-model-streamer >= 0.17, `streamer.stream_files(files, owned=True)`. A materialised
stream keeps owned copies when it copies while iterating
(`[(name, w.clone()) for name, w in weights]` instead of `list(weights)`).

## Fix safety

The fix copies the kept value with its kind's copy method (`.clone()` for torch,
`.copy()` for NumPy, `bytes(...)` for a memoryview, as the pack's `[[kinds]]` say): at a
store the stored value, the borrowed element of a stored tuple
(`kept.append((name, w.clone()))`) or the loop's borrowed name in a stored dict or list
display (`info[name] = {"weight": w.clone()}`), and for a materialised stream a copying
comprehension (`list(weights)` -> `[(n, w.clone()) for n, w in weights]`). It is
**unsafe**: every kept view becomes an owned copy (memory use grows by the bytes kept), and
the analysis assumes, but does not check, that the value is of its producer's kind. A value
made by a call the packs' `not-one-value` lists (`w.chunk(2)`, `t.numpy()`, `numpy.*`) is
not one value that copy applies to, and gets no fix.

## Known problems

A value returned after its loop moved on gets no fix: whether the caller needs it at all
is not known at that line.

A method called on a receiver of unknown type (`model.load_weights(weights)`) is taken to
run the methods of that name whose class the calling module can have loaded: through its
imports, or a registry on the way that imports a package's modules by name (every method of
that name when none is loaded). A class the caller never imports, whose object is built
elsewhere and handed in, is not followed when a loaded class has the method.
''',
    message=(
        "borrowed buffer view is kept in `{sink}` beyond its step; the producer reuses the buffer, "
        "so keep a copy here ({copy}){remedy}"
    ),
    step_note="kept in `{sink}`, which outlives the producer's step",
    forms=(
        (
            "read-after-advance",
            "borrowed buffer view is read by `{sink}(...)` after its producer may have refilled the "
            "buffer; read it before the producer advances, or keep a copy ({copy}){remedy}",
            "read by `{sink}(...)` after the producer may have refilled it",
        ),
        (
            "handed-back",
            "borrowed buffer view `{sink}` is handed back after its producer moved on, so the caller "
            "reads a buffer refilled since; hand back a copy ({copy}){remedy}",
            "`{sink}` handed back after the producer moved on",
        ),
    ),
    severity="warning",
    invalid=(
        Invalid(
            _FUSED_A_PROJ.replace("<STORE>", ""),
            lines=(24,),
            fixed=(("= loaded_weight\n", "= loaded_weight.clone()\n"),),
        ),
        Invalid(_PENDING_FP8.replace("<STORE>", ""), lines=(24,)),
        # The loader materialises the stream it was given to look ahead: every element is a
        # view of the same buffer, refilled many times before the list is complete.
        Invalid(
            _PRELUDE
            + '''\
def load_weights(model: torch.nn.Module, weights) -> None:
    params_dict = dict(model.named_parameters())
    weights = list(weights)
    for name, loaded_weight in weights:
        params_dict[name].data.copy_(loaded_weight)


def load_model(model: torch.nn.Module, files: list[str]) -> None:
    load_weights(model, runai_safetensors_weights_iterator(files))
''',
            lines=(21,),
            fixed=(("list(weights)", "[(name, value.clone()) for name, value in weights]"),),
        ),
        # Parameters aliased to the streamer's buffer: they change as the streamer reads on.
        Invalid(
            _PRELUDE
            + '''\
def load_weights(modules: dict[str, torch.nn.Module], files: list[str]) -> None:
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        module_name, _, param_name = name.rpartition(".")
        if param_name == "bias":
            modules[module_name].bias.data = loaded_weight
        else:
            modules[module_name].weight = torch.nn.Parameter(loaded_weight, requires_grad=False)
''',
            lines=(23, 25),
        ),
    ),
    valid=(
        Valid(_FUSED_A_PROJ.replace("<STORE>", ".clone()")),
        Valid(_PENDING_FP8.replace("<STORE>", ".clone()")),
        # Owned copies while iterating: the list holds no view of the buffer.
        Valid(
            _PRELUDE
            + '''\
def load_weights(model: torch.nn.Module, weights) -> None:
    params_dict = dict(model.named_parameters())
    weights = [(name, loaded_weight.clone()) for name, loaded_weight in weights]
    for name, loaded_weight in weights:
        params_dict[name].data.copy_(loaded_weight)


def load_model(model: torch.nn.Module, files: list[str]) -> None:
    load_weights(model, runai_safetensors_weights_iterator(files))
''',
        ),
        # Copied into the parameters' own storage in the step: nothing is kept.
        Valid(
            _PRELUDE
            + '''\
def load_weights(modules: dict[str, torch.nn.Module], files: list[str]) -> None:
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        module_name, _, param_name = name.rpartition(".")
        getattr(modules[module_name], param_name).data.copy_(loaded_weight)
''',
        ),
    ),
)
