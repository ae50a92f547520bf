"""Path patterns as a project's settings write them (``exclude``, ``per-file-ignores``).

Why here: the settings (``config.py``) judge a file by its path for ``per-file-ignores``,
and discovery (``discovery.py``), which reads the settings, walks the project with the
excludes; both match paths the same way, and neither may import the other (a cycle).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Callable, Iterable


def exclude_matcher(patterns: Iterable[str]) -> Callable[[str], bool]:
    """A predicate on a path relative to the project root (``/`` separators): whether the
    path itself, not its parents, matches one of the patterns. Compiled once per walk:
    it runs for every file and directory of the project."""
    regexes = []
    for pattern in patterns:
        pattern = pattern.strip().rstrip("/").removeprefix("./")
        regexes.append(fnmatch.translate(pattern))
        if pattern.startswith("**/"):  # also at the top level
            regexes.append(fnmatch.translate(pattern[3:]))
    if not regexes:
        return lambda rel: False
    combined = re.compile("|".join(regexes))

    def excluded(rel: str) -> bool:
        return bool(combined.match(rel.rpartition("/")[2]) or combined.match(rel))

    return excluded
