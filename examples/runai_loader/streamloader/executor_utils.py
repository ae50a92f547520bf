"""Shared helpers deciding whether a weight is loaded on the thread pool."""


def should_async_load(weight) -> bool:
    """Host tensors are copied on the pool to overlap H2D copies."""
    device = getattr(weight, "device", None)
    if device is None:
        return False
    return device.type == "cpu"


def maybe_submit(executor, futures, use_async, func, *args):
    if use_async:
        futures.append(executor.submit(func, *args))
    else:
        func(*args)
