"""Which runai-model-streamer versions and settings hand out views of a buffer they reuse.

For each version (installed with ``pip install --no-deps --target`` into a cache directory, so
the environment's own streamer is untouched) a fresh process streams a generated checkpoint of
8 float32 tensors of 1 MiB (tensor i filled with i) with ``SafetensorsStreamer.stream_files``,
*keeps* every yielded tensor, and counts how many of them no longer hold their own bytes once
the stream is exhausted: each one is a tensor whose memory the streamer refilled, i.e. what a
loader that hands tensors to a thread pool can read. Settings: ``owned`` not passed (what SGLang
0.5.x and vLLM call), ``owned=False``, ``owned=True`` where the version has the parameter, and
``RUNAI_STREAMER_MEMORY_LIMIT`` unset (the default), 0, and 4 MiB. CPU only: distributed
mode needs CUDA devices. Not a test: figures for docs/runtime.md.

    python benchmarks/streamer_exposure.py                         # the default version list
    python benchmarks/streamer_exposure.py --versions 0.15.9 0.17.1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE = Path(tempfile.gettempdir()) / "bufferlint-streamers"
VERSIONS = ["0.11.2", "0.13.4", "0.14.0", "0.15.0", "0.15.9", "0.16.0", "0.16.1", "0.17.0", "0.17.1"]
LIMITS = {"default": None, "0": "0", "4 MiB": str(4 * 1024 * 1024)}
OWNED = {"not passed": None, "owned=False": False, "owned=True": True}
N, NUMEL = 8, 256 * 1024

PROBE = r"""
import inspect, json, sys
from runai_model_streamer import SafetensorsStreamer
import runai_model_streamer

path, owned = sys.argv[1], json.loads(sys.argv[2])
kwargs = {} if owned is None else {"owned": owned}
if not hasattr(SafetensorsStreamer, "stream_files"):
    print(json.dumps({"result": "no stream_files"}))
    raise SystemExit
if kwargs and "owned" not in inspect.signature(SafetensorsStreamer.stream_files).parameters:
    print(json.dumps({"result": "no owned parameter"}))
    raise SystemExit
with SafetensorsStreamer() as streamer:
    streamer.stream_files([path], **kwargs)
    kept = list(streamer.get_tensors())
    bad = [name for name, t in kept if not bool(t.eq(float(int(name[1:]))).all())]
print(json.dumps({"result": f"{len(bad)} of {len(kept)}", "file": runai_model_streamer.__file__}))
"""


def install(version: str) -> Path:
    target = CACHE / version
    if not (target / "runai_model_streamer").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
             f"runai-model-streamer=={version}"],
            check=True,
        )
    return target


def checkpoint(directory: Path) -> Path:
    import torch
    from safetensors.torch import save_file

    path = directory / "model.safetensors"
    save_file({f"w{i}": torch.full((NUMEL,), float(i)) for i in range(N)}, str(path))
    return path


def probe(target: Path, path: Path, owned: object, limit: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNAI_STREAMER_", "BUFFERLINT_"))}
    env["PYTHONPATH"] = str(target)
    env["RUNAI_STREAMER_LOG_LEVEL"] = "ERROR"
    if limit is not None:
        env["RUNAI_STREAMER_MEMORY_LIMIT"] = limit
    proc = subprocess.run([sys.executable, "-c", PROBE, str(path), json.dumps(owned)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return f"error: {(proc.stderr.strip().splitlines() or ['?'])[-1][:80]}"
    report = json.loads(proc.stdout.splitlines()[-1])
    assert "file" not in report or report["file"].startswith(str(target)), report  # the version asked for
    return report["result"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", default=VERSIONS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = checkpoint(Path(tmp))
        print(f"{N} float32 tensors of {NUMEL * 4 // 2**20} MiB, all kept until the stream ends; CPU.")
        print(f"Cells: tensors overwritten with RUNAI_STREAMER_MEMORY_LIMIT {' / '.join(LIMITS)}\n")
        print("| version | " + " | ".join(f"`owned` {owned}" if owned == "not passed" else f"`{owned}`" for owned in OWNED) + " |")
        print("| --- |" + " --- |" * len(OWNED))
        for version in args.versions:
            target = install(version)
            cells = []
            for owned in OWNED.values():
                results = [probe(target, path, owned, limit) for limit in LIMITS.values()]
                if len(set(results)) == 1 and not results[0][0].isdigit():
                    cells.append(results[0])  # the same message for every limit
                else:
                    cells.append(" / ".join(r.split(" of ")[0] if r[0].isdigit() else r for r in results))
            print(f"| {version} | " + " | ".join(cells) + " |", flush=True)

if __name__ == "__main__":
    main()
