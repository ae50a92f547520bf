"""What ``guarded_submit`` adds to a plain ``executor.submit``, per submit.

For each argument shape, times N submissions of a no-op task to a 1-worker
ThreadPoolExecutor, plainly and through ``bufferlint.runtime.guarded_submit`` (which asks
``is_borrowed`` of every argument), and prints the median microseconds per submit of each and
their difference. Shapes: one owned tensor; ten owned tensors; a list of 1,000 owned tensors;
a list of a million ints; a dict of 100,000 str -> float; a list nested 5,000 deep.

    python benchmarks/submit_overhead.py [--submits 200] [--runs 5]

The cost of a submission is bounded by ``bufferlint.runtime.markers.INSPECTION_LIMIT``
values (the large plain-data shapes hit it and warn once). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def shapes() -> dict:
    import torch

    deep: object = torch.ones(2)
    for _ in range(5000):
        deep = [deep]
    return {
        "1 tensor": (torch.ones(16),),
        "10 tensors": tuple(torch.ones(16) for _ in range(10)),
        "list of 1,000 tensors": ([torch.ones(16) for _ in range(1000)],),
        "list of 1,000,000 ints": (list(range(1_000_000)),),
        "dict of 100,000 floats": ({f"k{i}": float(i) for i in range(100_000)},),
        "list nested 5,000 deep": (deep,),
    }


def per_submit(submit, args: tuple, n: int, runs: int) -> float:
    """Median over ``runs`` of the mean seconds per submit of ``n`` submissions."""
    samples = []
    for _ in range(runs):
        futures = []
        start = time.perf_counter()
        for _ in range(n):
            futures.append(submit(args))
        samples.append((time.perf_counter() - start) / n)
        wait(futures)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submits", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    from bufferlint.runtime import guarded_submit

    def task(*args: object) -> None:
        return None

    warnings.simplefilter("ignore")
    print(f"{'arguments':<26}{'plain µs':>12}{'guarded µs':>12}{'overhead µs':>13}")
    cases = shapes()
    gc.collect()
    gc.freeze()  # the large arguments are not rescanned by every collection during the timing
    with ThreadPoolExecutor(1) as pool:
        for name, args in cases.items():
            plain = per_submit(lambda a: pool.submit(task, *a), args, options.submits, options.runs)
            guarded = per_submit(lambda a: guarded_submit(pool, task, *a), args, options.submits, options.runs)
            print(f"{name:<26}{plain * 1e6:>12.1f}{guarded * 1e6:>12.1f}{(guarded - plain) * 1e6:>13.1f}")


if __name__ == "__main__":
    main()
