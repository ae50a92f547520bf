import torch


def default_weight_loader(param: torch.Tensor, loaded_weight: torch.Tensor) -> None:
    assert param.size() == loaded_weight.size(), (param.size(), loaded_weight.size())
    param.data.copy_(loaded_weight)


def row_parallel_weight_loader(param, loaded_weight, tp_rank=0, tp_size=1):
    shard = loaded_weight.shape[1] // tp_size
    param.data.copy_(loaded_weight.narrow(1, tp_rank * shard, shard))


def attach_loaders(model: torch.nn.Module, tp_rank: int, tp_size: int) -> None:
    for name, p in model.named_parameters():
        if "o_proj" in name or "down_proj" in name:
            p.weight_loader = row_parallel_weight_loader
            p.tp_kwargs = {"tp_rank": tp_rank, "tp_size": tp_size}
