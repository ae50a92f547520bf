"""Benchmark ``--jobs``: a cold ``bufferlint check --no-cache`` with one process and with
several, on real trees, and the issue's yardstick (one-core ``ast.parse`` of the same files).

For each tree, round after round (the machine's speed drifts, and other work shares its
cores: the load average is printed before and after), the yardstick, then the text
(``full``) and the ``json`` run (which also plans and verifies a fix for every finding: two
more analyses) with each ``--jobs`` value, each in a fresh process as CI runs it. Printed per
run: wall seconds, CPU seconds of the process and its workers, the peak resident memory of
the main process and of the largest child process (``getrusage``: the same figures as
``/usr/bin/time -v``'s "Maximum resident set size", which is the largest of the processes);
per tree: the fastest of each, its ratio to the fastest yardstick, and whether every run's
report was the same bytes as the one-process run's (a difference ends the benchmark: it is a
bug). Not a test: figures for docs/benchmarks.md.

    python benchmarks/jobs_bench.py --tree /work/wheels/sglang-0.5.16 --tree /work/wheels/sglang-0.5.23
    python benchmarks/jobs_bench.py --jobs 1,2,4 --repeat 3      # downloads sglang 0.5.16 and 0.5.23
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analyzer_bench import ast_parse_seconds, unpack_wheel  # noqa: E402

SCRIPT = (  # what the `bufferlint` command runs (bufferlint.entry), timed from the inside
    "import resource, sys, time\n"
    "from bufferlint import lifetime\n"
    "from bufferlint.cli import main\n"
    "lifetime.exit_frees_memory()\n"
    "start = time.perf_counter()\n"
    "code = main(['check', '--exit-zero', '--no-color', '--no-cache', '--format', sys.argv[2], '--jobs', sys.argv[3],"
    " sys.argv[1]])\n"
    "me, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "cpu = me.ru_utime + me.ru_stime + workers.ru_utime + workers.ru_stime\n"
    "sys.stderr.write(f'\\nBENCH {time.perf_counter() - start} {cpu} {me.ru_maxrss} {workers.ru_maxrss}\\n')\n"
    "lifetime.exit_now(code)\n"
)


@dataclass
class Run:
    seconds: float  # wall
    cpu: float  # user + system, the process and its workers
    rss_kib: int  # peak resident memory of the main process
    worker_rss_kib: int  # of the largest child process (the workers, git)
    report: str  # stdout


def run(tree: Path, output_format: str, jobs: int) -> Run:
    """One cold check in a fresh process, with the hash seed the command pins
    (bufferlint.entry), so that runs can be compared byte for byte."""
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, ".", output_format, str(jobs)], capture_output=True,
                          text=True, cwd=tree, env=environment)
    bench = [line for line in proc.stderr.splitlines() if line.startswith("BENCH ")]
    if proc.returncode != 0 or not bench:
        raise SystemExit(f"bufferlint failed on {tree}:\n{proc.stderr[-2000:]}")
    _, seconds, cpu, rss, worker_rss = bench[-1].split()
    return Run(float(seconds), float(cpu), int(rss), int(worker_rss), proc.stdout)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {len(os.sched_getaffinity(0))} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="an unpacked tree (default: sglang wheels)")
    parser.add_argument("--versions", default="0.5.16,0.5.23", help="sglang versions to download")
    parser.add_argument("--jobs", default="1,2", help="the --jobs values to compare (the first is the reference)")
    parser.add_argument("--formats", default="full,json", help="output formats to time")
    parser.add_argument("--repeat", type=int, default=2, help="rounds; the fastest run of each kind counts")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree] if args.tree else [unpack_wheel(v) for v in args.versions.split(",")]
    counts = [int(n) for n in args.jobs.split(",")]
    formats = args.formats.split(",")
    print(f"before: {load()}")
    for tree in trees:
        parses: list[float] = []
        runs: dict[tuple[str, int], list[Run]] = {(f, n): [] for f in formats for n in counts}
        files = lines = 0
        for round_number in range(1, max(1, args.repeat) + 1):
            files, lines, parse_s = ast_parse_seconds(tree)
            parses.append(parse_s)
            print(f"{tree.name} round {round_number}: ast.parse {parse_s:.1f} s ({load()})")
            for output_format in formats:
                for jobs in counts:
                    measured = run(tree, output_format, jobs)
                    runs[(output_format, jobs)].append(measured)
                    reference = runs[(output_format, counts[0])][0].report
                    same = "same report" if measured.report == reference else "REPORT DIFFERS"
                    print(f"    {output_format:<5} --jobs {jobs}: {measured.seconds:6.1f} s wall, {measured.cpu:6.1f} s CPU, "
                          f"peak {measured.rss_kib / 1024:5.0f} MiB (largest child {measured.worker_rss_kib / 1024:4.0f} MiB), "
                          f"{same}")
                    if measured.report != reference:
                        raise SystemExit(f"{tree}: --format {output_format} --jobs {jobs} differs from --jobs {counts[0]}")
        parse_s = min(parses)
        print(f"{tree.name}: {files} files, {lines:,} lines; fastest one-core ast.parse {parse_s:.1f} s")
        print(f"    {'format':<6} {'jobs':>4} {'wall s':>7} {'/ parse':>7} {'/ jobs 1':>8} {'CPU s':>6} {'peak MiB':>8}")
        for output_format in formats:
            base = min(r.seconds for r in runs[(output_format, counts[0])])
            for jobs in counts:
                best = min(runs[(output_format, jobs)], key=lambda r: r.seconds)
                peak = max(r.rss_kib for r in runs[(output_format, jobs)])
                print(f"    {output_format:<6} {jobs:>4} {best.seconds:>7.1f} {best.seconds / parse_s:>7.2f} "
                      f"{best.seconds / base:>8.2f} {best.cpu:>6.1f} {peak / 1024:>8.0f}")
    print(f"after: {load()}")


if __name__ == "__main__":
    main()
