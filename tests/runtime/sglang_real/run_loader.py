"""Run SGLang 0.5.16's real DeepSeek weight loader on the real RunAI streamer, in a fresh process.

    python run_loader.py SGLANG_DIR CHECKPOINT MODE [SHIM]

SGLANG_DIR holds files taken unmodified from the sglang 0.5.16 wheel (the test extracts them):
``model_loader/utils.py`` (``should_async_load``, ``maybe_executor_submit``),
``model_loader/weight_utils.py`` (``runai_safetensors_weights_iterator``, which marks every
streamed tensor, and ``default_weight_loader``) and
``models/deepseek_common/deepseek_weight_loader.py`` (``DeepseekV2WeightLoaderMixin``, whose
``do_load_weights`` submits each streamed tensor to a thread pool). Their imports that have
nothing to do with streaming or submitting are stubbed, every one listed in ``STUBS``.

MODE: ``unpatched``; ``shim`` (load SHIM, a module written by ``bufferlint shim``, before the
loader is imported, as the start-up hook does); ``sanitize`` (``BUFFERLINT_SANITIZE=1`` is set
by the caller). The pool the loader creates is replaced by a held one-worker executor that
starts tasks only when the streamer is exhausted. Prints one JSON line: the corrupted
parameter names, or the error the load raised, and the shim's target states.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import torch

SGLANG_DIR, CHECKPOINT, MODE = Path(sys.argv[1]), sys.argv[2], sys.argv[3]


class _Off:
    """An ``envs`` flag that is off: ``envs.SGLANG_X.get()`` is False."""

    def __getattr__(self, name: str) -> SimpleNamespace:
        return SimpleNamespace(get=lambda: False)


class _Tqdm:
    """A progress bar that shows nothing and passes the items through."""

    def __init__(self, iterable=(), *args, **kwargs):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)


def _unrelated(module: str):
    """Module attribute for names only needed to exist (types in annotations, unused helpers)."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__module__": module})

    return __getattr__


# Imports of the three real modules that are unrelated to streaming and submitting. A stub
# exports the listed attributes; any other name it is asked for is an inert placeholder class.
STUBS = {
    "transformers": {},  # model configs and dynamic class loading
    "transformers.dynamic_module_utils": {},
    "huggingface_hub": {},  # downloading checkpoints
    "huggingface_hub.constants": {},
    "tqdm": {},
    "tqdm.auto": {"tqdm": _Tqdm},  # progress bar
    "sglang.utils": {"is_in_ci": lambda: False},
    "sglang.srt.configs.model_config": {},
    "sglang.srt.configs.load_config": {},
    "sglang.srt.distributed": {},  # tensor-parallel groups (one CPU process here)
    "sglang.srt.distributed.parallel_state": {},
    "sglang.srt.environ": {"envs": _Off()},  # feature flags, all off
    "sglang.srt.layers": {},
    "sglang.srt.layers.deep_gemm_wrapper": {},
    "sglang.srt.layers.moe.fused_moe_triton.layer": {  # no experts in this model
        "FusedMoE": SimpleNamespace(make_expert_params_mapping=lambda **kwargs: []),
    },
    "sglang.srt.layers.quantization": {},  # no quantization
    "sglang.srt.layers.quantization.base_config": {},
    "sglang.srt.layers.quantization.fp8": {},
    "sglang.srt.layers.quantization.fp8_utils": {},
    "sglang.srt.layers.quantization.int8_utils": {},
    "sglang.srt.layers.quantization.modelopt_quant": {},
    "sglang.srt.layers.utils": {"get_layer_id": lambda name: None},  # no pipeline stages
    "sglang.srt.model_loader.ci_weight_validation": {},  # CI checkpoint validation
    "sglang.srt.runtime_context": {},
    "sglang.srt.utils": {"get_bool_env_var": lambda name, default="false": False},
    "sglang.srt.utils.common": {"is_cuda_alike": lambda: False},  # CPU: the streamer yields CPU tensors
    "sglang.srt.models.deepseek_common.utils": {  # device and quantization flags: CPU, none
        "_is_cuda": False, "_is_fp8_fnuz": False, "_is_hip": False, "_is_musa": False, "_is_npu": False,
        "_is_xpu": False, "_use_aiter_gfx95": False,
        "enable_nextn_moe_bf16_cast_to_fp8": lambda quant_config: False,
        "is_wint4afp8_or_wint4a16_config": lambda quant_config: False,
    },
}


def install_stubs() -> None:
    for name, attrs in STUBS.items():
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in sys.modules or SGLANG_DIR.parent.joinpath(*parts[:i]).is_dir() and prefix != name:
                continue
            module = types.ModuleType(prefix)
            module.__path__ = []  # a package, so deeper stubs can sit below it
            module.__getattr__ = _unrelated(prefix)
            sys.modules[prefix] = module
            parent = sys.modules.get(prefix.rpartition(".")[0])
            if parent is not None:
                setattr(parent, parts[i - 1], module)
        vars(sys.modules[name]).update(attrs)


def build_model(loader_module):
    """A minimal model using SGLang's real weight-loading mixin: parameters only."""

    class TinyDeepseek(loader_module.DeepseekV2WeightLoaderMixin, torch.nn.Module):
        def __init__(self, names, numel):
            super().__init__()
            self.config = SimpleNamespace(n_routed_experts=0, q_lora_rank=None, num_hidden_layers=len(names))
            self.quant_config = None
            self.num_fused_shared_experts = 0
            self.pp_group = SimpleNamespace(is_first_rank=True, is_last_rank=True)
            self.model = torch.nn.Module()
            self.model.layers = torch.nn.ModuleList()
            for _ in names:
                layer = torch.nn.Module()
                layer.mlp = torch.nn.Module()
                layer.mlp.down_proj = torch.nn.Module()
                layer.mlp.down_proj.weight = torch.nn.Parameter(torch.empty(numel), requires_grad=False)
                self.model.layers.append(layer)

        def post_load_weights(self, is_nextn=False, weight_names=None):
            pass  # the real one post-processes MLA attention weights this model does not have

    return TinyDeepseek


def main() -> None:
    sys.path.insert(0, str(SGLANG_DIR.parent))
    install_stubs()
    from bufferlint.runtime import status
    from bufferlint.runtime.startup import load_shim
    from bufferlint.testing import HeldExecutor

    if MODE == "shim":
        load_shim(sys.argv[4])
    result = {"states_before_import": [[s.target, s.state] for s in status()]}
    import safetensors

    from sglang.srt.model_loader import weight_utils
    from sglang.srt.models.deepseek_common import deepseek_weight_loader as loader_module

    with safetensors.safe_open(CHECKPOINT, "pt") as f:
        names = list(f.keys())
    expected = {name: float(name.split(".")[2]) for name in names}
    held = HeldExecutor()

    def held_pool(*args, **kwargs):
        return held  # the loader's `concurrent.futures.ThreadPoolExecutor()`, one held worker

    # The loader module refers to `concurrent.futures.ThreadPoolExecutor` by attribute; give it
    # a view of concurrent.futures whose pool is the held one (the rest is the real module).
    import concurrent.futures

    loader_module.concurrent = SimpleNamespace(futures=SimpleNamespace(**{
        **vars(concurrent.futures), "ThreadPoolExecutor": held_pool,
    }))

    def released_at_end(weights):
        try:
            yield from weights
        finally:
            held.release()

    model = build_model(loader_module)(names, 256 * 1024)
    try:
        model.do_load_weights(released_at_end(weight_utils.runai_safetensors_weights_iterator([CHECKPOINT])))
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    else:
        params = dict(model.named_parameters())
        result["corrupted"] = sorted(n for n in names if not bool(params[n].eq(expected[n]).all()))
    finally:
        held.shutdown()
    result["states_after"] = [[s.target, s.state] for s in status()]
    print(json.dumps(result))


if __name__ == "__main__":
    main()
