"""How many processes a run may use: ``--jobs N`` / ``jobs = N``, by default every CPU this
process may run on (``os.sched_getaffinity``: a container or ``taskset`` limit counts, the
machine's core count does not).

What is spread over processes is the work whose answer is small and does not depend on the
order it is done in: the syntax check of every reported file (compiled in workers while this
process analyses, ``analysis.frontend.syntax_check``) and the fix planning with LibCST
(``fixes.runner``). The analysis itself stays in one process, for two measured reasons:

* it needs each parsed file's syntax tree, and moving a tree between processes costs more
  than parsing it (600 sglang 0.5.16 modules: ``ast.parse`` 10.5 s, ``pickle.loads`` of their
  trees 11.7 s), so parsing in workers cannot pay;
* its fixpoint reads and writes one project-wide state (summaries, the heap, which functions
  are hot) in a worklist order that traces depend on, so independent pieces exist only
  between rounds that are themselves sequential.

So ``--jobs 1`` does everything in this process (fix planning still runs in one forked
process at a time: that is how its time budget is enforced, ``fixes.budget``), and every N
gives the same report, byte for byte: each worker's answers are merged in file order.

Like ``source.MAX_BYTES``, the number is process-wide: the API sets it for each run from the
settings (``use``), and the places that start processes read it (``processes``), so that the
analysis's signatures do not carry a knob that never changes what it computes.
"""

from __future__ import annotations

import multiprocessing
import os

_chosen: int | None = None  # None: every CPU this process may use


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform (macOS, Windows)
        return os.cpu_count() or 1


def use(jobs: int | None) -> None:
    """The number of processes the next runs may use; None: every available CPU."""
    global _chosen
    _chosen = jobs


def processes() -> int:
    """How many processes a run may use (this one included)."""
    return _chosen if _chosen is not None else available_cpus()


def can_fork() -> bool:
    """Worker processes are forked (they inherit the project already read, nothing is
    pickled but each chunk's paths and answers); where the platform cannot, there are none."""
    return "fork" in multiprocessing.get_all_start_methods()
