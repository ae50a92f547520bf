from concurrent.futures import Executor, Future
from typing import Any, Callable, List, Optional


def maybe_executor_submit(
    *,
    executor: Optional[Executor],
    futures: List[Future],
    use_async: bool,
    func: Callable[..., Any],
    func_args=(),
    func_kwargs=None,
) -> None:
    func_kwargs = func_kwargs or {}
    if use_async and executor is not None:
        futures.append(executor.submit(func, *func_args, **func_kwargs))
    else:
        func(*func_args, **func_kwargs)
