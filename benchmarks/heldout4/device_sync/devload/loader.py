"""Stream a checkpoint straight into GPU parameters and buffers."""

from __future__ import annotations

import torch
from torch import nn

from devload.config import UploadConfig
from devload.streaming import streamed
from devload.xfer import upload_fenced, upload_on


class GpuLoader:
    def __init__(self, model: nn.Module, cfg: UploadConfig) -> None:
        self.model = model
        self.cfg = cfg
        self.params = dict(model.named_parameters())
        self.side = torch.cuda.Stream()

    def load_overlapped(self, files: list[str]) -> None:
        with streamed(files) as tensors:
            for name, t in tensors:
                self.params[name].data.copy_(t, non_blocking=True)
        torch.cuda.synchronize()

    def load_side_stream(self, files: list[str]) -> None:
        with streamed(files) as tensors:
            for name, t in tensors:
                upload_on(self.side, self.params[name].data, t)

    def load_waited_on_device(self, files: list[str]) -> None:
        main = torch.cuda.current_stream()
        with streamed(files) as tensors:
            for name, t in tensors:
                with torch.cuda.stream(self.side):
                    self.params[name].data.copy_(t, non_blocking=True)
                main.wait_stream(self.side)

    def load_fenced(self, files: list[str]) -> None:
        with streamed(files) as tensors:
            for name, t in tensors:
                upload_fenced(self.params[name].data, t).synchronize()

    def load_configured(self, files: list[str]) -> dict[str, torch.Tensor]:
        out = {}
        with streamed(files) as tensors:
            for name, t in tensors:
                out[name] = t.to(self.cfg.device, non_blocking=self.cfg.overlap)
        torch.cuda.synchronize()
        return out

    def load_repinned(self, files: list[str]) -> dict[str, torch.Tensor]:
        out = {}
        with streamed(files) as tensors:
            for name, t in tensors:
                out[name] = t.pin_memory().to(self.cfg.device, non_blocking=True)
        torch.cuda.synchronize()
        return out

    def load_cloned(self, files: list[str]) -> dict[str, torch.Tensor]:
        out = {}
        with streamed(files) as tensors:
            for name, t in tensors:
                out[name] = t.clone().to(self.cfg.device, non_blocking=True)
        torch.cuda.synchronize()
        return out


def attach_buffers(module: nn.Module, files: list[str]) -> None:
    """Non-trainable tensors (rope caches, norms in fp32) live on the module as given."""
    with streamed(files) as tensors:
        for name, t in tensors:
            short = name.rsplit(".", 1)[-1]
            if short.endswith("_cache"):
                module.register_buffer(short, t, persistent=False)
            elif short.endswith("_scale"):
                module.register_buffer(short, t.to("cuda"), persistent=False)
            elif short == "embed_tokens":
                module.embed = nn.Parameter(t, requires_grad=False)
            elif short == "lm_head":
                module.head = nn.Parameter(t.detach().clone(), requires_grad=False)
            else:
                getattr(module, short).data = t.contiguous()
