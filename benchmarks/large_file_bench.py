"""Cost of one large generated file, per output format: work must stay proportional to
what is reported.

Generates a ~5 MiB module (under the 5 MiB ``MAX_BYTES`` limit) in a fresh project: plain
functions, with an SGLang-shaped buggy loader (one BL001 finding, with a fix) every
``--every`` functions, and runs a cold ``bufferlint check --format F`` on it in a fresh
process for each format, printing wall seconds, peak RSS and the findings reported.

    python benchmarks/large_file_bench.py [--mib 4.9] [--every 300] [--formats text,json,sarif]

Not a test: it prints figures (the README quotes them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PLAIN = '''
def step_{i}(values, scale={i}):
    """Generated helper {i}."""
    total = 0
    for v in values:
        total += v * scale
    return {{"index": {i}, "total": total}}

'''
LOADER = '''
def weights_{i}(tensors):
    for name, tensor in tensors.items():
        setattr(tensor, "_sglang_runai_streamer_tensor", True)
        yield name, tensor


def load_{i}(tensors, fn):
    with concurrent.futures.ThreadPoolExecutor() as executor:
        for name, w in weights_{i}(tensors):
            executor.submit(fn, w)

'''


def generate(path: Path, mib: float, every: int) -> int:
    """Write the module; return the number of loaders (= expected findings)."""
    parts, size, loaders, i = ["import concurrent.futures\n"], 0, 0, 0
    while size < mib * 1024 * 1024:
        chunk = LOADER.format(i=i) if i % every == every - 1 else PLAIN.format(i=i)
        loaders += i % every == every - 1
        parts.append(chunk)
        size += len(chunk)
        i += 1
    path.write_text("".join(parts))
    return loaders


def run(project: Path, fmt: str) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, findings) of a cold check in a fresh process."""
    script = (
        "import resource, sys\n"
        "from bufferlint.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", script, "check", "-q", "--format", fmt, "big.py"],
        cwd=project, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{fmt}: exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    rss_mib = int(proc.stderr.strip().splitlines()[-1]) / 1024
    if fmt == "text":
        findings = sum(1 for line in proc.stdout.splitlines() if not line.startswith(" "))
    elif fmt == "json":
        findings = len(json.loads(proc.stdout)["findings"])
    else:
        findings = len(json.loads(proc.stdout)["runs"][0]["results"])
    return seconds, rss_mib, findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=4.9)
    parser.add_argument("--every", type=int, default=300, help="one buggy loader per this many functions")
    parser.add_argument("--formats", default="text,json,sarif")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bufferlint-large-") as tmp:
        project = Path(tmp)
        (project / "pyproject.toml").write_text("[project]\nname = 'large'\n")
        loaders = generate(project / "big.py", options.mib, options.every)
        size = (project / "big.py").stat().st_size / 1024 / 1024
        print(f"big.py: {size:.2f} MiB, {loaders} buggy loaders")
        print(f"{'format':<8}{'seconds':>10}{'peak MiB':>10}{'findings':>10}")
        for fmt in options.formats.split(","):
            seconds, rss, findings = run(project, fmt)
            print(f"{fmt:<8}{seconds:>10.1f}{rss:>10.0f}{findings:>10}")


if __name__ == "__main__":
    main()
