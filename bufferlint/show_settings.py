"""``bufferlint check --show-settings`` (Ruff's anchor): the settings and the vocabulary in
effect, each entry with the pack or config it came from, and a warning for every entry of the
project's own configuration that no project file mentions (a pattern that can match nothing,
usually a typo or a module that moved).

"Mentioned" is a whole-word search for the pattern's last name (or the marker) in the
project's files: a pattern whose name appears nowhere cannot match a call, while one whose
name appears may still match nothing (the search is a cheap upper bound, not the analysis).
"""

from __future__ import annotations

import re
from pathlib import Path

from bufferlint.config import Settings
from bufferlint.jobs import available_cpus
from bufferlint.packs import PACK_KEYS, builtin_pack_dir, pack_key

# The keys whose entries are listed, in the pack key table's order.
SECTIONS = tuple(key.key for key in PACK_KEYS if key.names is not None)


def show_settings(settings: Settings, files: list[Path]) -> tuple[str, list[str]]:
    """(the listing, warnings for the project's own entries that no file mentions)."""
    vocab = settings.vocab
    mentioned = _mentioned({_name(entry) for _, entry in vocab.origins}, files)
    shipped = str(builtin_pack_dir())
    lines = [
        f"project root: {settings.root}",
        f"config: {settings.config_path or '(none: defaults)'}",
        f"select = {list(settings.select)}",
        f"extend-select = {list(settings.extend_select)}",
        f"ignore = {list(settings.ignore)}",
        f"per-file-ignores = {_table(settings.per_file_ignores)}",
        f"exclude = {list(settings.exclude)}",
        f"extend-exclude = {list(settings.extend_exclude)}",
        f"respect-gitignore = {str(settings.respect_gitignore).lower()}",
        f"force-exclude = {str(settings.force_exclude).lower()}",
        f"output-format = {settings.output_format or 'full'}",
        f"jobs = {settings.jobs}" if settings.jobs is not None else
        f"jobs = {available_cpus()}  (every CPU this process may use)",
        f"files: {len(files)}",
    ]
    lines.append("\n[packs]")  # in the order they were merged: the shipped ones, rule-packs, the inline keys
    for origin in vocab.packs:
        where = f"shipped {Path(origin).name}" if origin.startswith(shipped) else origin
        title = vocab.titles.get(origin)
        lines.append(f"  {title}  ({where})" if title else f"  {where}")
    if settings.declarations.asked:  # the versions the packs' version conditions are decided by
        lines.append("\n[declared versions]")
        lines += [f"  {line}" for line in settings.declarations.listing()]
        lines += [f"  owned, not a source: {pattern}: {why}" for pattern, why in vocab.not_lending]
        lines += [f"  lets marked values through, not a guard: {pattern}: {why}" for pattern, why in vocab.not_checking]
        lines += [f"  warning: {problem}" for problem in settings.declarations.problems]
    warnings = []
    for section in SECTIONS:
        entries = sorted(entry for key, entry in vocab.origins if key == section)
        if not entries:
            continue
        lines.append(f"\n[{section}]")
        for entry in entries:
            origin = vocab.origins[(section, entry)]
            where = f"shipped {Path(origin).name}" if origin.startswith(shipped) else origin
            detail = _kind_detail(vocab, section, entry)
            unused = section != "kinds" and _name(entry) not in mentioned  # a kind is no code name
            lines.append(f"  {entry}{detail}  ({where}){'  -- not mentioned in the project' if unused else ''}")
            if unused and not origin.startswith(shipped):
                warnings.append(f"{origin}: {section} entry {entry!r} matches nothing: no project file mentions {_name(entry)!r}")
    return "\n".join(lines) + "\n", warnings


def _table(pairs: tuple[tuple[str, tuple[str, ...]], ...]) -> str:
    return "{" + ", ".join(f"{pattern!r}: {list(codes)}" for pattern, codes in pairs) + "}"


def _name(entry: str) -> str:
    """The word a call pattern (``pkg.mod.func(kw=1)``, ``.method``) or marker is found by."""
    entry = entry.split("(", 1)[0]
    return entry[:-2].rsplit(".", 1)[-1] if entry.endswith(".*") else entry.rsplit(".", 1)[-1]  # `numpy.*`: numpy


def _kind_detail(vocab, section: str, entry: str) -> str:
    if section == "kinds":
        kind = vocab.kinds[entry]
        markers = ", ".join(kind.markers) or "no marker"
        return f": {markers}; copy {kind.copy_of('value') or '(none)'}"
    if pack_key(section).kinded:
        kinds = {spec.kind for spec in getattr(vocab, section) if any(str(p) == entry for p in spec.calls)}
        named = ", ".join(sorted(k for k in kinds if k))
        return f"  kind={named}" if named else ""
    return ""


def _mentioned(names: set[str], files: list[Path]) -> set[str]:
    names = {n for n in names if n}
    if not names:
        return set()
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")\b")
    found: set[str] = set()
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        found.update(m.decode() for m in pattern.findall(data))
        if found >= names:
            break
    return found
