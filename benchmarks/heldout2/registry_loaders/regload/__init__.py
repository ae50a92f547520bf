"""Weight loaders selected by ``LoadConfig.load_format`` through a registry."""
from .config import LoadConfig, get_loader, register_loader
from . import loaders as _loaders  # noqa: F401  (registers the built-in loaders)

__all__ = ["LoadConfig", "get_loader", "register_loader"]
