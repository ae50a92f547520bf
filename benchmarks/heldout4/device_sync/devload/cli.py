"""`python -m devload.cli MODEL_DIR`: load a checkpoint onto the GPU the configured way."""

from __future__ import annotations

import glob
import os
import sys

import torch

from devload.config import UploadConfig
from devload.loader import GpuLoader, attach_buffers


def main(argv: list[str]) -> int:
    files = sorted(glob.glob(os.path.join(argv[0], "*.safetensors")))
    model = torch.load(os.path.join(argv[0], "skeleton.pt"), weights_only=False).cuda()
    loader = GpuLoader(model, UploadConfig())
    mode = os.environ.get("DEVLOAD_MODE", "side")
    if mode == "overlap":
        loader.load_overlapped(files)
    elif mode == "side":
        loader.load_side_stream(files)
    elif mode == "device-wait":
        loader.load_waited_on_device(files)
    elif mode == "fenced":
        loader.load_fenced(files)
    else:
        extra = {"configured": loader.load_configured, "repinned": loader.load_repinned,
                 "cloned": loader.load_cloned}[mode](files)
        for name, t in extra.items():
            model.get_parameter(name).data = t
    attach_buffers(model, files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
