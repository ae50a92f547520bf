"""The cache's differential test, fast form (the long form: ``scripts/cache_fuzz.py``):
seeded random edits of small projects of the fixture corpus, each followed by a warm run and
a ``--no-cache`` run whose JSON reports and exit codes must be the same. A failure names the
seed, the step and the edits; ``python scripts/cache_fuzz.py --corpus --seed N`` replays it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cache_fuzzing import corpus_projects, fuzz

PROJECTS = corpus_projects()
# (project, seed, edits, concurrent and killed runs): about 250 edits, 30 s on two cores.
CASES = [
    ("analysis/cross_module", 1, 50, True),
    ("analysis/objects_and_bindings", 2, 40, False),
    ("analysis/broken_guard", 3, 40, False),
    ("analysis_config/two_kinds", 4, 40, False),
    ("analysis_config/users_word", 5, 30, False),
    ("fixes", 6, 30, False),
    ("aliasing.py", 7, 20, False),  # the group of eight single-file cases holding it
]


def _project(name: str) -> Path | list[Path]:
    """A corpus project by name, or the group of single-file cases holding the file ``name``
    (groups are named by their first file, which a new fixture sorting before it changes)."""
    if name in PROJECTS:
        return PROJECTS[name]
    return next(files for files in PROJECTS.values() if isinstance(files, list) and any(f.name == name for f in files))


@pytest.mark.parametrize("name, seed, edits, processes", CASES, ids=[case[0] for case in CASES])
def test_warm_runs_after_random_edits_are_cold_runs(tmp_path: Path, name: str, seed: int, edits: int,
                                                    processes: bool) -> None:
    report = fuzz(_project(name), tmp_path / "project", seed, edits, processes=processes)
    assert report.edits >= edits
    assert not report.divergences, f"{name}, seed {seed}:\n" + "\n\n".join(map(str, report.divergences[:3]))
