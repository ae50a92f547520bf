from concurrent.futures import ThreadPoolExecutor

import torch

from clpipe.streams import checkpoint_stream, hf_to_internal, skip_buffers


def make_async_setter(pool: ThreadPoolExecutor, params, inflight: list):
    def _set(name: str, tensor: torch.Tensor) -> None:
        inflight.append(pool.submit(params[name].data.copy_, tensor))
    return _set


def make_blocking_setter(pool: ThreadPoolExecutor, params):
    def _set(name: str, tensor: torch.Tensor) -> None:
        pool.submit(params[name].data.copy_, tensor).result()
    return _set


def load(model: torch.nn.Module, files, overlap: bool = True) -> dict:
    params = dict(model.named_parameters())
    pool = ThreadPoolExecutor(4)
    inflight = []
    setter = make_async_setter(pool, params, inflight) if overlap else make_blocking_setter(pool, params)
    seen_shapes = {}
    qkv_parts = []
    for name, tensor in hf_to_internal(skip_buffers(checkpoint_stream(files))):
        seen_shapes[name] = tuple(tensor.shape)
        if name.endswith(("q_proj.weight", "k_proj.weight", "v_proj.weight")):
            qkv_parts.append(tensor)
            if len(qkv_parts) == 3:
                params[name.rsplit(".", 2)[0] + ".qkv_proj.weight"].data.copy_(torch.cat(qkv_parts))
                qkv_parts.clear()
            continue
        setter(name, tensor)
    for f in inflight:
        f.result()
    pool.shutdown()
    return seen_shapes
