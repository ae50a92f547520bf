"""Checkpoint-name to module-name mapping shared by the loaders."""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

# (param_name, shard_name, shard_id)
STACKED_PARAMS_MAPPING: List[Tuple[str, str, object]] = [
    (".qkv_proj", ".q_proj", "q"),
    (".qkv_proj", ".k_proj", "k"),
    (".qkv_proj", ".v_proj", "v"),
    (".gate_up_proj", ".gate_proj", 0),
    (".gate_up_proj", ".up_proj", 1),
]

_LAYER_RE = re.compile(r"layers\.(\d+)\.")


@dataclass
class LoadConfig:
    model_path: str
    load_format: str = "runai_streamer"
    num_io_threads: int = 8
    tp_rank: int = 0
    tp_size: int = 1
    ignore_patterns: List[str] = field(default_factory=lambda: ["*.pt", "original/*"])
    revision: Optional[str] = None


def layer_index(name: str) -> Optional[int]:
    m = _LAYER_RE.search(name)
    return int(m.group(1)) if m else None


def remap_stacked(name: str) -> Tuple[str, Optional[object]]:
    for param_name, shard_name, shard_id in STACKED_PARAMS_MAPPING:
        if shard_name in name:
            return name.replace(shard_name, param_name), shard_id
    return name, None


def filter_layers(names, start: int, end: int) -> Dict[str, int]:
    out = {}
    for n in names:
        idx = layer_index(n)
        if idx is None or start <= idx < end:
            out[n] = -1 if idx is None else idx
    return out
