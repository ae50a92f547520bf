import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Tuple

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def _split_qkv(name: str, w: torch.Tensor, tp_size: int) -> Dict[str, torch.Tensor]:
    return {f"{name}.rank{i}": part.contiguous() for i, part in enumerate(w.chunk(tp_size, 0))}


class CheckpointConverter:
    def __init__(self, files, tp_size: int = 2):
        self.files = files
        self.tp_size = tp_size
        self.out: Dict[str, torch.Tensor] = {}
        self._lock = threading.Lock()

    def _convert_one(self, item: Tuple[str, torch.Tensor]) -> None:
        name, w = item
        parts = _split_qkv(name, w, self.tp_size)
        with self._lock:
            self.out.update(parts)

    def convert_threads(self) -> Dict[str, torch.Tensor]:
        threads = []
        for item in runai_safetensors_weights_iterator(self.files):
            th = threading.Thread(target=self._convert_one, args=(item,))
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
        return self.out

    def convert_threads_lockstep(self) -> Dict[str, torch.Tensor]:
        for item in runai_safetensors_weights_iterator(self.files):
            th = threading.Thread(target=self._convert_one, args=(item,))
            th.start()
            th.join()
        return self.out

    def convert_map(self) -> Dict[str, torch.Tensor]:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(self._convert_one, runai_safetensors_weights_iterator(self.files)))
        return self.out

    def convert_map_owned(self) -> Dict[str, torch.Tensor]:
        owned = ((n, w.clone()) for n, w in runai_safetensors_weights_iterator(self.files))
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(self._convert_one, owned))
        return self.out
