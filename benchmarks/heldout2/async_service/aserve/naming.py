"""Checkpoint name -> module parameter name."""
_PREFIXES = (("model.", ""), ("transformer.", ""))


def hf_to_local(name: str) -> str:
    for old, new in _PREFIXES:
        if name.startswith(old):
            return new + name[len(old):]
    return name
