"""Benchmark `bufferlint check` on a real tree: the sglang wheels (0.5.16 has the bug).

Prints files, lines, wall seconds and peak memory of a cold `bufferlint check --no-cache` run (a
fresh process, as in CI), the findings per rule, and the yardstick: the same tree's plain
`ast.parse` time on one core. Each is timed ``--repeat`` times in turn and the fastest
counts (the machine's speed drifts by half over minutes; every run is printed); since the
fastest yardstick and the fastest check may come from different minutes, the median of
each round's own ratio (check / the yardstick timed just before it) is printed too. Then the cold `--format json` run (what CI and SARIF upload
use: it also plans a fix for every finding) and its ratio to the text run, with the CPU
seconds of both (the process and its workers: on a loaded machine they move less than wall
time does). Then, per tree, the cache's runs (``cache_bench.py``: warm with nothing changed,
after edits, and pre-commit's one-file runs); ``--no-warm`` skips them. Not a test: figures
for the README and closing notes.

    python benchmarks/analyzer_bench.py                 # downloads sglang 0.5.16, 0.5.17, 0.5.23
    python benchmarks/analyzer_bench.py --tree DIR ...  # any unpacked tree(s)
"""

from __future__ import annotations

import argparse
import ast
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(tempfile.gettempdir()) / "bufferlint-bench"


def unpack_wheel(version: str) -> Path:
    target = CACHE / f"sglang-{version}"
    if (target / "sglang").is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"sglang=={version}", "-d", str(CACHE)],
        check=True,
    )
    wheel = next(CACHE.glob(f"sglang-{version}-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target, [n for n in archive.namelist() if n.startswith("sglang/")])
    return target


def ast_parse_seconds(tree: Path) -> tuple[int, int, float]:
    files = sorted(tree.rglob("*.py"))
    lines, start = 0, time.perf_counter()
    for path in files:
        source = path.read_bytes()
        lines += source.count(b"\n")
        try:
            ast.parse(source)
        except SyntaxError:
            pass
    return len(files), lines, time.perf_counter() - start


@dataclass
class Run:
    seconds: float  # wall
    cpu: float  # user + system, the process and its worker processes
    rss_kib: int  # peak resident memory of the main process


def run(tree: Path, output_format: str = "text") -> tuple[Run, subprocess.CompletedProcess]:
    """A cold ``bufferlint check`` in a fresh process, as pre-commit and CI run it; peak RSS
    and CPU time from the child's rusage."""
    script = (  # what the `bufferlint` command runs (bufferlint.entry), timed from the inside
        "import resource, sys, time\n"
        "from bufferlint import lifetime\n"
        "from bufferlint.cli import main\n"
        "lifetime.exit_frees_memory()\n"
        "start = time.perf_counter()\n"
        "code = main(['check', '--exit-zero', '--no-color', '--no-cache', '--format', sys.argv[2], sys.argv[1]])\n"
        "me, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "cpu = me.ru_utime + me.ru_stime + workers.ru_utime + workers.ru_stime\n"
        "sys.stderr.write(f'\\nBENCH {time.perf_counter() - start} {cpu} {me.ru_maxrss}\\n')\n"
        "lifetime.exit_now(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(tree), output_format], capture_output=True, text=True, cwd=tree)
    bench = [line for line in proc.stderr.splitlines() if line.startswith("BENCH ")]
    if proc.returncode != 0 or not bench:
        raise SystemExit(f"bufferlint failed on {tree}:\n{proc.stderr[-2000:]}")
    _, seconds, cpu, rss_kib = bench[-1].split()
    return Run(float(seconds), float(cpu), int(rss_kib)), proc


def check(tree: Path) -> tuple[Run, dict]:
    """The default (text) check, with its findings."""
    measured, proc = run(tree)
    findings = [
        {"rule": match.group(2), "location": match.group(1)}
        # A group's sites are indented under its head: read every site, indented or not.
        for match in re.finditer(r"^\s*(\S+:\d+):\d+: (BL\d{3}) ", proc.stdout, re.MULTILINE)
    ]
    summary = re.search(r"^Found (\d+) findings?", proc.stdout, re.MULTILINE)
    if summary and int(summary.group(1)) != len(findings):
        raise SystemExit(f"read {len(findings)} findings from the report on {tree}, which says it found {summary.group(1)}")
    errors = [line for line in proc.stderr.splitlines() if "could not be analysed" in line]
    return measured, {"findings": findings, "errors": errors}


def _spread(values: list[float], digits: int = 1) -> str:
    return " / ".join(f"{v:.{digits}f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="an unpacked tree (default: sglang wheels)")
    parser.add_argument("--versions", default="0.5.16,0.5.17,0.5.23", help="sglang versions to download")
    parser.add_argument("--no-warm", action="store_true", help="skip the cache's warm and pre-commit runs")
    parser.add_argument("--repeat", type=int, default=3,
                        help="cold runs of each kind, interleaved with the yardstick; the fastest counts (default: 3)")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree] if args.tree else [unpack_wheel(v) for v in args.versions.split(",")]
    print(f"{'tree':<28} {'files':>6} {'lines':>10} {'ast.parse s':>11} {'check s':>8} {'ratio':>6} {'peak MiB':>9}  findings")
    cold_json = []
    for tree in trees:
        # This machine's speed drifts by half over minutes: the yardstick and the check are
        # timed in turn, several times, and the fastest of each counts (as timeit does).
        parses, texts, jsons, report = [], [], [], None
        for _ in range(max(1, args.repeat)):
            files, lines, parse_s = ast_parse_seconds(tree)
            parses.append(parse_s)
            text, report = check(tree)
            texts.append(text)
            jsons.append(run(tree, "json")[0])
        parse_s = min(parses)
        text = min(texts, key=lambda r: r.seconds)
        json = min(jsons, key=lambda r: r.seconds)
        rules = Counter(f["rule"] for f in report["findings"])
        per_rule = ", ".join(f"{rule} {count}" for rule, count in sorted(rules.items())) or "none"
        print(
            f"{tree.name:<28} {files:>6} {lines:>10,} {parse_s:>11.1f} {text.seconds:>8.1f} "
            f"{text.seconds / parse_s:>6.2f} {text.rss_kib / 1024:>9.0f}  {per_rule}"
        )
        print(f"    all runs: ast.parse {_spread(parses)} s, check {_spread([r.seconds for r in texts])} s, "
              f"json {_spread([r.seconds for r in jsons])} s")
        text_ratios = [r.seconds / y for r, y in zip(texts, parses)]
        json_ratios = [r.seconds / y for r, y in zip(jsons, parses)]
        print(f"    each round's ratio to its yardstick: check {_spread(text_ratios, 2)} (median "
              f"{statistics.median(text_ratios):.2f}), json {_spread(json_ratios, 2)} (median {statistics.median(json_ratios):.2f})")
        for finding in report["findings"]:
            print(f"    {finding['rule']} {finding['location']}")
        cold_json.append((tree, parse_s, text, json))
    print(f"\n{'tree':<28} {'json s':>7} {'json/text':>9} {'json/parse':>10} {'text cpu s':>10} {'json cpu s':>10} {'json peak MiB':>13}")
    for tree, parse_s, text, json in cold_json:
        print(
            f"{tree.name:<28} {json.seconds:>7.1f} {json.seconds / text.seconds:>9.2f} {json.seconds / parse_s:>10.2f} "
            f"{text.cpu:>10.1f} {json.cpu:>10.1f} {json.rss_kib / 1024:>13.0f}"
        )
    if not args.no_warm:
        from cache_bench import measure, show

        for tree in trees:
            print()
            show(f"{tree.name}: the cache", measure(tree))


if __name__ == "__main__":
    main()
