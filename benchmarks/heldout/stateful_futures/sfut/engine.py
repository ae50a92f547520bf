from concurrent.futures import Future, ThreadPoolExecutor
from typing import Dict

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def _assign(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    fn = getattr(param, "weight_loader", None)
    (fn or (lambda p, x: p.data.copy_(x)))(param, w)


class ShardedLoadEngine:
    def __init__(self, model: torch.nn.Module, workers: int = 4):
        self.params = dict(model.named_parameters())
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix="wload")
        self._futures: Dict[str, Future] = {}
        self.scales: Dict[str, torch.Tensor] = {}

    def submit_all(self, files) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            if name.endswith(".weight_scale"):
                self.scales[name] = w
                continue
            self._futures[name] = self.executor.submit(_assign, self.params[name], w)

    def finalize(self) -> None:
        for name, fut in self._futures.items():
            fut.result()
        self._futures.clear()
        for name, s in self.scales.items():
            self.params[name].data.copy_(s)

    def _drain(self) -> None:
        while self._futures:
            _, fut = self._futures.popitem()
            fut.result()

    def submit_stepwise(self, files) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            if name.endswith(".weight_scale"):
                self.scales[name] = w.detach().clone()
                continue
            self._futures[name] = self.executor.submit(_assign, self.params[name], w)
            self._drain()
