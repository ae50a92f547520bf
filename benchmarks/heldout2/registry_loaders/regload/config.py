"""Load configuration and the loader registry."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict


@dataclasses.dataclass(frozen=True)
class LoadConfig:
    load_format: str = "runai_streamer"
    num_threads: int = 8
    max_inflight: int = 16
    files: tuple[str, ...] = ()
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)


_REGISTRY: Dict[str, type] = {}


def register_loader(load_format: str) -> Callable[[type], type]:
    """Class decorator: make ``cls`` the loader for ``load_format``."""

    def deco(cls: type) -> type:
        if load_format in _REGISTRY:
            raise ValueError(f"loader for {load_format!r} registered twice")
        _REGISTRY[load_format] = cls
        cls.load_format = load_format
        return cls

    return deco


def get_loader(config: LoadConfig):
    try:
        cls = _REGISTRY[config.load_format]
    except KeyError:
        raise ValueError(f"unknown load format {config.load_format!r}; known: {sorted(_REGISTRY)}")
    return cls(config)
