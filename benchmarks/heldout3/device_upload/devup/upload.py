"""Stream a checkpoint from object storage straight into device parameters."""
from __future__ import annotations

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .config import BLOCKING, UploadConfig


class DeviceUploader:
    def __init__(self, model: torch.nn.Module, cfg: UploadConfig) -> None:
        self.model = model
        self.cfg = cfg
        self.params = dict(model.named_parameters())
        self.copy_stream = torch.cuda.Stream(device=cfg.device)
        self.done = torch.cuda.Event()

    def upload_overlapped(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            self.params[name].data.copy_(w, non_blocking=True)
        torch.cuda.synchronize()

    def upload_checked(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            self.params[name].data.copy_(w, non_blocking=True)
            torch.cuda.current_stream().synchronize()

    def upload_side_stream(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            with torch.cuda.stream(self.copy_stream):
                self.params[name].data.copy_(w, non_blocking=True)
            torch.cuda.current_stream().wait_stream(self.copy_stream)

    def upload_side_stream_synced(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            with torch.cuda.stream(self.copy_stream):
                self.params[name].data.copy_(w, non_blocking=True)
            self.copy_stream.synchronize()

    def upload_with_event(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            staged = w.to(self.cfg.device, non_blocking=True)
            self.done.record()
            self.done.synchronize()
            self.params[name].data.copy_(staged)

    def upload_event_first(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            self.done.record()
            staged = w.cuda(non_blocking=True)
            self.done.synchronize()
            self.params[name].data.copy_(staged)

    def upload_configured(self, files: list[str]) -> None:
        overlap = self.cfg.overlap_h2d
        for name, w in runai_safetensors_weights_iterator(files):
            self.params[name].data.copy_(w.to(self.cfg.device, non_blocking=overlap))

    def upload_pinned_off(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            self.params[name].data.copy_(w, non_blocking=BLOCKING)
