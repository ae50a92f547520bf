"""The long fuzz run: N generated programs through the analysis and the fixer (see
``tests/fuzzing.py``), reporting programs, seconds, findings, fixed files and failures.

    python scripts/fuzz.py --programs 2000 [--seed 0]

Exit 1 when any program fails; each failure is printed with its program. The short run is
``tests/test_fuzz.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from fuzzing import check_program, compiles, hypothesmith, programs  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    totals = {"programs": 0, "with findings": 0, "findings": 0, "fixed files": 0, "failures": 0}
    failures: list[tuple[str, list[str]]] = []

    start = time.perf_counter()

    @seed(args.seed)
    @settings(max_examples=args.programs, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(programs().filter(compiles))
    def run(text: str) -> None:
        outcome = check_program(text)
        totals["programs"] += 1
        totals["findings"] += outcome.findings
        totals["with findings"] += outcome.findings > 0
        totals["fixed files"] += outcome.fixed_files
        if outcome.problems:
            totals["failures"] += 1
            failures.append((text, outcome.problems))
        if totals["programs"] % 100 == 0:
            print(_line(totals, time.perf_counter() - start), flush=True)

    run()
    seconds = time.perf_counter() - start
    for text, problems in failures[:20]:
        print("=" * 72, "\n" + "\n".join(problems), "\n" + "-" * 72 + "\n" + text)
    print(f"hypothesmith: {'yes' if hypothesmith else 'not installed'}")
    print(_line(totals, seconds))
    return 1 if failures else 0


def _line(totals: dict[str, int], seconds: float) -> str:
    return ", ".join(f"{name}: {n}" for name, n in totals.items()) + f", seconds: {seconds:.0f}"


if __name__ == "__main__":
    sys.exit(main())
