"""Baselines: turn the check on in CI on the day a large codebase adopts it.

``--write-baseline FILE`` records every current finding by its fingerprint
(``bufferlint.fingerprint``); ``--baseline FILE`` then reports only findings not in it,
and says how many baselined findings have been fixed since (so the file can be
regenerated to lock the improvement in). The file is JSON meant to be committed:

    {"version": 1, "tool": "bufferlint",
     "findings": [{"fingerprint": "...", "rule": "BL001", "path": "pkg/loader.py",
                   "function": "pkg.loader:load", "line": 7, "message": "..."}]}

Only ``fingerprint`` decides a match; ``rule`` and ``path`` (relative to the project root)
scope the "fixed" count to what the run checked, and the rest is there for people
reading the file. ``line`` is where the finding was when the baseline was written.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from bufferlint.atomic import write_atomic
from bufferlint.findings import Finding
from bufferlint.reporters.base import display_path, json_text

VERSION = 1


class BaselineError(Exception):
    """The baseline file is missing, unreadable or not a bufferlint baseline (exit 2)."""


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    rule: str
    path: str


@dataclass(frozen=True)
class Outcome:
    new: list[Finding]  # findings not in the baseline: the ones to report
    baselined: int  # current findings the baseline covers (not reported)
    fixed: int  # baselined findings, in the files and rules checked, that are gone


def write(file: Path, findings: Sequence[Finding], prints: Sequence[str], root: Path, name: str | None = None) -> None:
    """``name``: how to refer to the file in errors (as the user gave it)."""
    entries = sorted(
        (
            {
                "fingerprint": fp,
                "rule": f.rule,
                "path": display_path(f.path, root),
                "function": f.function,
                "line": f.span.line,
                "message": f.message,
            }
            for f, fp in zip(findings, prints)
        ),
        key=lambda e: (e["path"], e["line"], e["rule"], e["fingerprint"]),
    )
    text = json_text({"version": VERSION, "tool": "bufferlint", "findings": entries}, indent=2) + "\n"
    try:
        write_atomic(file, text.encode("utf-8"))
    except OSError as exc:
        raise BaselineError(f"--write-baseline {name or file}: cannot write: {exc.strerror or exc}") from None


def load(file: Path, name: str | None = None) -> list[Entry]:
    """The entries of a baseline file; ``name``: how to refer to it in errors."""
    where = f"--baseline {name or file}"
    try:
        data = json.loads(Path(file).read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{where}: no such file (create it with --write-baseline {name or file})") from None
    except OSError as exc:
        raise BaselineError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError(f"{where}: not a bufferlint baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or "findings" not in data or "version" not in data:
        raise BaselineError(f"{where}: not a bufferlint baseline (expected an object with 'version' and 'findings')")
    if data["version"] != VERSION:
        raise BaselineError(f"{where}: unsupported baseline version {data['version']!r} (this bufferlint reads version {VERSION})")
    if not isinstance(data["findings"], list):
        raise BaselineError(f"{where}: 'findings' must be a list")
    entries = []
    for i, item in enumerate(data["findings"]):
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("fingerprint", "rule", "path")):
            raise BaselineError(f"{where}: findings[{i}] must be an object with string 'fingerprint', 'rule' and 'path'")
        entries.append(Entry(item["fingerprint"], item["rule"], item["path"]))
    return entries


def apply(
    entries: Sequence[Entry],
    findings: Sequence[Finding],
    prints: Sequence[str],
    in_scope: Callable[[Entry], bool],
) -> Outcome:
    """Split the findings into new and baselined; ``in_scope`` says whether a baseline entry
    belongs to what this run checked (its file was reported on, its rule is selected), so
    that checking a few files does not count every other baselined finding as fixed."""
    available = Counter(e.fingerprint for e in entries)
    new, baselined = [], 0
    for finding, fp in zip(findings, prints):
        if available[fp] > 0:
            available[fp] -= 1
            baselined += 1
        else:
            new.append(finding)
    fixed = 0
    for entry in entries:
        if available[entry.fingerprint] > 0 and in_scope(entry):
            available[entry.fingerprint] -= 1
            fixed += 1
    return Outcome(new, baselined, fixed)
