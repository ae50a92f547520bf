"""The cache's differential tester, long form (the fast form is ``tests/test_cache_fuzz.py``):
seeded random edits of a project, each followed by a warm (cached) run and a ``--no-cache``
run whose JSON reports and exit codes must be the same (see ``tests/cache_fuzzing.py`` for
the edits).

    python scripts/cache_fuzz.py --corpus --edits 2000 [--seed 0]   # every fixture project
    python scripts/cache_fuzz.py TREE --edits 200 [--seed 0] [--batch 3]   # a real tree

With ``--corpus`` the edits are shared out over the fixture corpus's projects, each with its
own seed (SEED + its number). Edits go mostly to the files and functions the last analysis
read (``--batch``: up to that many edits between two comparisons: a cold run of a large
tree takes seconds). Prints each divergence (seed, step, edits, a diff) and the
figures; exit 1 when any warm run differed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from cache_fuzzing import FuzzReport, corpus_projects, fuzz  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path, nargs="?", help="the project to edit (a copy is edited)")
    parser.add_argument("--corpus", action="store_true", help="the fixture corpus's projects instead of a tree")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=1, help="at most this many edits between two comparisons")
    parser.add_argument("--no-processes", action="store_true", help="no concurrent or killed runs")
    options = parser.parse_args()
    if options.corpus == (options.tree is not None):
        parser.error("give a TREE or --corpus")
    if options.corpus:
        projects = corpus_projects()
        share = -(-options.edits // len(projects))
        jobs = [(name, source, options.seed + number, share) for number, (name, source) in enumerate(projects.items())]
    else:
        jobs = [(str(options.tree), options.tree.resolve(), options.seed, options.edits)]
    reports: list[tuple[str, FuzzReport]] = []
    with tempfile.TemporaryDirectory(prefix="cache-fuzz-") as scratch:
        for number, (name, source, seed, edits) in enumerate(jobs):
            report = fuzz(source, Path(scratch) / str(number), seed, edits, processes=not options.no_processes,
                          batch=options.batch, log=lambda line: print(line, flush=True))
            reports.append((name, report))
            print(f"{name}: seed {seed}, {report.edits} edits, {report.comparisons} comparisons, "
                  f"{len(report.divergences)} divergences, {report.seconds:.0f} s", flush=True)
    kinds: dict[str, int] = {}
    served: dict[str, int] = {}
    for _, report in reports:
        for kind, count in report.kinds.items():
            kinds[kind] = kinds.get(kind, 0) + count
        for how, count in report.served.items():
            served[how] = served.get(how, 0) + count
    total = sum(r.edits for _, r in reports)
    print(f"\n{total} edits, {sum(r.comparisons for _, r in reports)} comparisons of a warm run with a --no-cache run, "
          f"{sum(len(r.divergences) for _, r in reports)} divergences, {sum(r.seconds for _, r in reports):.0f} s "
          f"(seeds {', '.join(str(r.seed) for _, r in reports)})")
    print("edits by kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))
    print("in-process warm runs: " + ", ".join(f"{how} {count}" for how, count in sorted(served.items()))
          + " (reused: the last analysis held; replayed: edited functions replayed; analysed: analysed again)")
    return 1 if any(r.divergences for _, r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
