import torch

from hierload.base import BaseModelLoader


def _copy_into(param: torch.nn.Parameter, loaded_weight: torch.Tensor) -> None:
    loader = getattr(param, "weight_loader", None)
    if loader is not None:
        loader(param, loaded_weight)
    else:
        param.data.copy_(loaded_weight)


class LlamaLoader(BaseModelLoader):
    def handle_weight(self, name, loaded_weight):
        param = self.params[name]
        self.pending.append(self.pool.submit(_copy_into, param, loaded_weight))


class QwenLoader(BaseModelLoader):
    def handle_weight(self, name, loaded_weight):
        param = self.params[name]
        self.pending.append(self.pool.submit(_copy_into, param, loaded_weight.clone()))


class MixtralLoader(BaseModelLoader):
    def handle_weight(self, name, loaded_weight):
        param = self.params[name]
        fut = self.pool.submit(_copy_into, param, loaded_weight)
        fut.result()

    def remember_tied(self, name, loaded_weight):
        self.tied[name] = loaded_weight.clone()


def build_loader(arch: str, model: torch.nn.Module) -> BaseModelLoader:
    return {"llama": LlamaLoader, "qwen2": QwenLoader, "mixtral": MixtralLoader}[arch](model)
