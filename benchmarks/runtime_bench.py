"""What the sync-on-marker fix costs, and what the ``copy`` policy buys back.

Streams a generated ~1 GiB safetensors checkpoint (from the page cache) with the real RunAI
Model Streamer (``owned=False``, a reusing ring) through an SGLang-shaped loader whose per-tensor
work is realistic -- narrow a tensor-parallel shard, convert bf16 -> fp32, copy into a
preallocated parameter -- and prints, per loader:

* unsafe     -- every tensor submitted to a 2-worker ThreadPoolExecutor (the bug);
* sync       -- GuardedExecutor(policy="sync"): the upstream fix, borrowed views loaded inline;
* copy       -- GuardedExecutor(policy="copy"): cloned on the loading thread, then async;
* sequential -- no executor at all.

GiB/s is checkpoint bytes / wall time of a whole load (median of --runs runs, after one warm-up),
peak RSS is the process's (each loader runs in its own process), corrupted is the number of
parameters whose contents differ from the checkpoint, summed over the timed runs.

    python benchmarks/runtime_bench.py [--gib 1] [--runs 5] [--workers 2] [--limit-mib 256]

Needs torch, safetensors and runai-model-streamer. Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ROWS, COLS = 4096, 2048  # one bf16 tensor = 16 MiB; the loader keeps the first half of the rows (TP rank 0 of 2)
VARIANTS = ["unsafe", "sync", "copy", "sequential"]


def write_checkpoint(path: Path, gib: float) -> int:
    import torch
    from safetensors.torch import save_file

    n = max(1, int(gib * 1024 ** 3 // (ROWS * COLS * 2)))
    save_file({f"layers.{i}.weight": torch.full((ROWS, COLS), float(i + 1), dtype=torch.bfloat16) for i in range(n)}, str(path))
    return n


def weight_loader(param, loaded_weight):
    shard = loaded_weight.narrow(0, 0, ROWS // 2)  # this rank's shard
    param.copy_(shard.to(torch.float32))  # dtype conversion, then copy into the parameter


def stream(path: str):
    """SGLang's runai iterator, reduced: zero-copy views, marked."""
    from runai_model_streamer import SafetensorsStreamer

    with SafetensorsStreamer() as streamer:
        streamer.stream_files([path], owned=False)
        for name, tensor in streamer.get_tensors():
            setattr(tensor, "_sglang_runai_streamer_tensor", True)
            yield name, tensor


def load(variant: str, path: str, params: dict, workers: int) -> None:
    from bufferlint.runtime import GuardedExecutor

    if variant == "sequential":
        for name, w in stream(path):
            weight_loader(params[name], w)
        return
    pool = ThreadPoolExecutor(max_workers=workers)
    executor = pool if variant == "unsafe" else GuardedExecutor(pool, policy=variant)
    futures = [executor.submit(weight_loader, params[name], w) for name, w in stream(path)]
    for f in futures:
        f.result()
    pool.shutdown()


def child(variant: str, path: str, n: int, runs: int, workers: int) -> None:
    import resource

    global torch
    import torch

    # One intra-op thread: the loader's parallelism is the executor's. (With torch's default
    # threads on a 2-CPU box every variant's figures swing with whatever else runs.)
    torch.set_num_threads(1)
    params = {f"layers.{i}.weight": torch.empty(ROWS // 2, COLS) for i in range(n)}
    times, corrupted = [], 0
    for run in range(runs + 1):
        for p in params.values():
            p.zero_()
        t0 = time.perf_counter()
        load(variant, path, params, workers)
        elapsed = time.perf_counter() - t0
        bad = sum(not bool(params[f"layers.{i}.weight"].eq(float(i + 1)).all()) for i in range(n))
        if run:  # run 0 warms caches and allocators
            times.append(elapsed)
            corrupted += bad
    size = os.path.getsize(path)
    print(json.dumps({
        "variant": variant,
        "gibps": size / 1024 ** 3 / statistics.median(times),
        "runs": [round(size / 1024 ** 3 / t, 3) for t in times],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "corrupted": corrupted,
        "tensors": n * runs,
    }))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit-mib", type=int, default=256, help="RUNAI_STREAMER_MEMORY_LIMIT (the reused ring's size)")
    ap.add_argument("--child", nargs=3, metavar=("VARIANT", "PATH", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        variant, path, n = args.child
        child(variant, path, int(n), args.runs, args.workers)
        return

    env = dict(os.environ, RUNAI_STREAMER_MEMORY_LIMIT=str(args.limit_mib * 1024 * 1024), RUNAI_STREAMER_LOG_LEVEL="WARNING")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.safetensors"
        n = write_checkpoint(path, args.gib)
        size = path.stat().st_size
        print(f"checkpoint: {n} bf16 tensors of {ROWS}x{COLS}, {size / 1024 ** 3:.2f} GiB; ring "
              f"RUNAI_STREAMER_MEMORY_LIMIT={args.limit_mib} MiB, owned=False; {args.workers} workers; "
              f"median of {args.runs} runs; {os.cpu_count()} CPUs")
        results = []
        for variant in VARIANTS:
            out = subprocess.run(
                [sys.executable, __file__, "--runs", str(args.runs), "--workers", str(args.workers), "--child", variant, str(path), str(n)],
                env=env, capture_output=True, text=True, check=True,
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    unsafe = results[0]["gibps"]
    print()
    print("| loader | GiB/s (median) | vs unsafe | peak RSS (MiB) | corrupted tensors |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['variant']} | {r['gibps']:.2f} | {100 * r['gibps'] / unsafe:.0f}% | {r['peak_rss_mib']:.0f} | {r['corrupted']} / {r['tensors']} |")
    print()
    for r in results:
        print(f"{r['variant']}: runs GiB/s {r['runs']}")


if __name__ == "__main__":
    main()
