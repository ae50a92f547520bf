"""Start-up cost of the ``bufferlint-runtime.pth`` hook (Python runs it in every process).

Two throwaway virtualenvs over this interpreter's site-packages, identical except that one has
the hook installed as the wheel installs it. Prints the median wall time of ``python -c pass``
in each (runs interleaved, so machine load hits both alike), with the variables unset, and with
``BUFFERLINT_SHIM`` naming a one-target shim (the cost when it is in use: importing
``bufferlint.runtime`` and registering the target, no torch). Not a test: figures for the docs.

    python benchmarks/startup_bench.py --runs 200
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import timeit
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PTH = ROOT / "bufferlint" / "runtime" / "bufferlint-runtime.pth"


def make_env(base: Path, name: str, hook: bool) -> Path:
    env_dir = base / name
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    if hook:  # the environment's own site-packages, as its python reports it
        site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              capture_output=True, text=True, check=True).stdout.strip()
        shutil.copy(PTH, Path(site) / PTH.name)
    return python


def wall(python: Path, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([str(python), "-c", "pass"], env=env, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        plain, hooked = make_env(base, "plain", False), make_env(base, "hooked", True)
        (base / "bench_shim.py").write_text("from bufferlint.runtime import patch\npatch('bench_pkg.loader:Model.load_weights')\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("BUFFERLINT_")}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(base)])
        with_shim = {**env, "BUFFERLINT_SHIM": "bench_shim"}
        cases = {"no hook": (plain, env), "hook, variables unset": (hooked, env), "hook, BUFFERLINT_SHIM set": (hooked, with_shim)}
        times: dict = {name: [] for name in cases}
        for name, (python, environ) in cases.items():  # warm-up (page cache, .pyc files)
            wall(python, environ)
        for _ in range(args.runs):
            for name, (python, environ) in cases.items():
                times[name].append(wall(python, environ))
    base_ms = statistics.median(times["no hook"]) * 1000
    print(f"`python -c pass`, median of {args.runs} interleaved runs, {os.cpu_count()} CPUs\n")
    print("| case | median (ms) | vs no hook (ms) | quartiles (ms) |\n| --- | ---: | ---: | --- |")
    for name, values in times.items():
        ms = statistics.median(values) * 1000
        q1, _, q3 = statistics.quantiles(values, n=4)
        print(f"| {name} | {ms:.2f} | {ms - base_ms:+.2f} | {q1 * 1000:.1f} - {q3 * 1000:.1f} |")
    print(f"\nthe hook's line itself, as site runs it (compile + exec), variables unset: {line_cost_us():.1f} us")


def line_cost_us(number: int = 20000) -> float:
    """In-process cost of what site does with the .pth line: below process-timing noise."""
    line = PTH.read_text().strip()
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("BUFFERLINT_")}
    try:
        seconds = min(timeit.repeat(lambda: exec(compile(line, "pth", "exec"), {}), number=number, repeat=5))
    finally:
        os.environ.update(saved)
    return seconds / number * 1e6


if __name__ == "__main__":
    main()
