from concurrent.futures import ThreadPoolExecutor

import torch

from cbstream.session import for_each_tensor


def _copy_into(param: torch.Tensor, src: torch.Tensor) -> None:
    param.data.copy_(src)


def load_with_stats(model: torch.nn.Module, paths, pool: ThreadPoolExecutor):
    params = dict(model.named_parameters())
    norms = {}
    futures = []
    callbacks = [
        lambda n, t: futures.append(pool.submit(_copy_into, params[n], t)),
        lambda n, t: norms.__setitem__(n, float(t.float().norm())),
    ]
    for_each_tensor(paths, callbacks)
    for f in futures:
        f.result()
    return norms


def load_inline(model: torch.nn.Module, paths):
    params = dict(model.named_parameters())
    for_each_tensor(paths, [lambda n, t: params[n].data.copy_(t)])
