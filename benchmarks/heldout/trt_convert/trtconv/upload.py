import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def upload_streamed(model: torch.nn.Module, files) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data.copy_(w, non_blocking=True)
    torch.cuda.synchronize()


def upload_streamed_synced(model: torch.nn.Module, files) -> None:
    params = dict(model.named_parameters())
    stream = torch.cuda.current_stream()
    for name, w in runai_safetensors_weights_iterator(files):
        params[name].data.copy_(w, non_blocking=True)
        stream.synchronize()
