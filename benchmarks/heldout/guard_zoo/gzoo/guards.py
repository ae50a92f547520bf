import torch

_BORROWED_ATTRS = ("_sglang_runai_streamer_tensor", "_borrowed_from_mmap")


def should_async_load_any(weight: torch.Tensor) -> bool:
    if any(getattr(weight, attr, False) for attr in _BORROWED_ATTRS):
        return False
    return weight.device.type == "cpu"


def should_async_load_match(weight: torch.Tensor) -> bool:
    match weight.device.type:
        case "cpu":
            return weight.numel() >= 1 << 16
        case _:
            return False


def should_async_load_try(weight: torch.Tensor) -> bool:
    try:
        if weight._sglang_runai_streamer_tensor:
            return False
    except AttributeError:
        pass
    return weight.is_cpu


def should_async_load_typo(weight: torch.Tensor) -> bool:
    if getattr(weight, "_runai_streamer_tensor", False):
        return False
    for dim in weight.shape:
        if dim == 0:
            return False
    return weight.device.type == "cpu"


def should_async_load_pattern(weight: torch.Tensor) -> bool:
    match weight:
        case torch.Tensor(_sglang_runai_streamer_tensor=True):
            return False
        case torch.Tensor(is_cpu=True):
            return True
        case _:
            return False
