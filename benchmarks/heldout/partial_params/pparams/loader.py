import functools
from concurrent.futures import ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from pparams.weight_loaders import default_weight_loader


def _loader_table(model: torch.nn.Module):
    params = dict(model.named_parameters())
    loaders = {
        name: functools.partial(
            getattr(p, "weight_loader", default_weight_loader), p, **getattr(p, "tp_kwargs", {})
        )
        for name, p in params.items()
    }
    return params, loaders


def load_parallel(model: torch.nn.Module, files, num_threads: int = 8) -> None:
    _, loaders = _loader_table(model)
    with ThreadPoolExecutor(num_threads) as executor:
        futures = []
        for name, loaded_weight in runai_safetensors_weights_iterator(files):
            futures.append(executor.submit(loaders[name], loaded_weight))
        for f in futures:
            f.result()


def load_parallel_owned(model: torch.nn.Module, files, num_threads: int = 8) -> None:
    _, loaders = _loader_table(model)
    with ThreadPoolExecutor(num_threads) as executor:
        futures = []
        for name, loaded_weight in runai_safetensors_weights_iterator(files):
            job = functools.partial(loaders[name], loaded_weight.clone())
            futures.append(executor.submit(job))
        for f in futures:
            f.result()


def load_serial(model: torch.nn.Module, files) -> None:
    _, loaders = _loader_table(model)
    for name, loaded_weight in runai_safetensors_weights_iterator(files):
        job = functools.partial(loaders[name], loaded_weight)
        job()
