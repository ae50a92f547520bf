from concurrent.futures import ThreadPoolExecutor, wait
from typing import Dict, Iterable, Tuple

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


class BaseModelLoader:
    """Streams a checkpoint and dispatches every tensor to ``handle_weight``."""

    def __init__(self, model: torch.nn.Module, num_workers: int = 4):
        self.model = model
        self.params: Dict[str, torch.nn.Parameter] = dict(model.named_parameters())
        self.pool = ThreadPoolExecutor(max_workers=num_workers)
        self.pending = []
        self.tied: Dict[str, torch.Tensor] = {}

    def iter_weights(self, files) -> Iterable[Tuple[str, torch.Tensor]]:
        return runai_safetensors_weights_iterator(files)

    def load(self, files) -> None:
        for name, loaded_weight in self.iter_weights(files):
            if name.endswith("embed_tokens.weight") and self.model.config.tie_word_embeddings:
                self.remember_tied(name, loaded_weight)
            self.handle_weight(name, loaded_weight)
        wait(self.pending)
        self.pending.clear()
        self.finish()

    def remember_tied(self, name: str, loaded_weight: torch.Tensor) -> None:
        self.tied[name] = loaded_weight

    def handle_weight(self, name: str, loaded_weight: torch.Tensor) -> None:
        param = self.params[name]
        param.data.copy_(loaded_weight)

    def finish(self) -> None:
        for name, w in self.tied.items():
            self.params[name.replace("embed_tokens", "lm_head")].data.copy_(w)
