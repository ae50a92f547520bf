"""The versions of a library a project can get, from what the project declares.

bufferlint runs in its own environment (pre-commit, pipx), not the project's, so the
installed packages say nothing; the project's files do. For each package a pack's version
condition names, the first of these that names it decides (docs/rule-packs.md):

1. lock files in the project root (``uv.lock``, ``poetry.lock``, ``pylock.toml``,
   ``pylock.*.toml``): they pin, so they win; the admitted versions are the pinned ones;
2. ``requirements*.txt`` in the project root: what a deployment installs, often pinned;
   each file is one way to install (the union of the files, lines of one file together);
3. ``pyproject.toml`` ``[project]`` ``dependencies`` and ``optional-dependencies``: the
   main constraint, and with each extra that names the package, both together;
4. ``assume-versions`` in ``[tool.bufferlint]``, for what nothing declares.

A package named nowhere may be installed in any version. A declaration that cannot be read
(an unparseable requirement, a lock file that is no TOML) is a problem the run reports,
naming the file; what it would have said counts as undeclared (any version).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from bufferlint.packs import PackError, Vocabulary, read_toml
from bufferlint.versions import VersionRange, floor_fix, overlap

LOCK_FILES = ("uv.lock", "poetry.lock", "pylock.toml")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class Declared:
    """What a project declares about one package: the specifier sets it may be installed
    under (any one of them; ``""`` admits every version) and where that was read."""

    package: str
    versions: tuple[str, ...]
    origin: str

    def admits_some(self, applies: VersionRange) -> bool:
        return any(overlap(SpecifierSet(v), applies.specifiers()) for v in self.versions)

    def describe(self) -> str:
        return " or ".join(f"{self.package}{v}" if v else f"{self.package} (any version)" for v in self.versions)


@dataclass
class Declarations:
    """The declared versions of the packages the vocabulary's conditions name."""

    asked: tuple[str, ...] = ()  # the packages the conditions name, declared or not
    packages: dict[str, Declared] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # declarations that could not be read

    def declared(self, package: str) -> Declared | None:
        return self.packages.get(canonicalize_name(package))

    def listing(self) -> list[str]:
        """One line per package asked about: what is declared, and where (--show-settings)."""
        return [f"{package}: {self.packages[package].describe()}  ({self.packages[package].origin})"
                if package in self.packages else f"{package}: any version  (nothing declares it)"
                for package in self.asked]


def read_declarations(root: Path, wanted: set[str], assumed: dict[str, str], config: str) -> Declarations:
    """The declarations in ``root`` of the packages ``wanted`` (normalised names), in the
    module's order; ``assumed`` is ``assume-versions`` (already validated), read from ``config``."""
    result = Declarations(asked=tuple(sorted(wanted)))
    if not wanted:
        return result
    tiers = [_locks(root, result.problems), _requirements(root, result.problems), _pyproject(root, result.problems),
             {canonicalize_name(n): ((v,), config) for n, v in assumed.items()}]
    for package in sorted(wanted):
        for tier in tiers:
            if package in tier:
                versions, origin = tier[package]
                result.packages[package] = Declared(package, versions, origin)
                break
    return result


def assumed_versions(value: object, where: str) -> dict[str, str]:
    """Validate ``assume-versions = { "pkg" = ">=0.17" }``; ValueError naming ``where``."""
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a table of package names to version specifiers, such as "
                         "{ \"runai-model-streamer\" = \">=0.17\" }")
    for name, versions in value.items():
        if not isinstance(versions, str):
            raise ValueError(f"{where} {name!r}: expected a version specifier string such as \">=0.17\"")
        try:
            SpecifierSet(versions)
        except InvalidSpecifier as exc:
            raise ValueError(f"{where} {name!r}: {exc}") from None
    return dict(value)


Tier = dict[str, tuple[tuple[str, ...], str]]


def _locks(root: Path, problems: list[str]) -> Tier:
    pinned: dict[str, set[str]] = {}
    origins: dict[str, list[str]] = {}
    paths = [root / name for name in LOCK_FILES] + sorted(root.glob("pylock.*.toml"))
    for path in paths:
        if not path.is_file():
            continue
        try:
            data = read_toml(path, "lock file")
        except PackError as exc:
            problems.append(f"{exc}; its pins are ignored (versions it would declare count as undeclared)")
            continue
        entries = data.get("packages" if path.name.startswith("pylock") else "package", [])
        if not isinstance(entries, list):
            problems.append(f"{path}: not a lock file bufferlint can read (no list of packages); its pins are ignored")
            continue
        for entry in entries:
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str):
                continue
            version = entry.get("version")
            package = canonicalize_name(name)
            pinned.setdefault(package, set()).add(f"=={version}" if isinstance(version, str) else "")
            if path.name not in origins.setdefault(package, []):
                origins[package].append(path.name)
    return {package: (tuple(sorted(versions)), ", ".join(origins[package])) for package, versions in pinned.items()}


def _requirements(root: Path, problems: list[str]) -> Tier:
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(root.glob("requirements*.txt")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: cannot read requirements file ({getattr(exc, 'strerror', None) or exc}); ignored")
            continue
        in_file: dict[str, SpecifierSet] = {}
        for number, line in _logical_lines(text):
            if not line or line.startswith("-") or "://" in line or line.startswith((".", "/")):
                continue  # options (-r, -e, --index-url) and paths or URLs name no version
            requirement = _requirement(line, f"{path}:{number}", problems)
            if requirement is not None:
                name, specifiers = requirement
                in_file[name] = in_file.get(name, SpecifierSet()) & specifiers
        for name, specifiers in in_file.items():
            found.setdefault(name, []).append((str(specifiers), path.name))
    return {name: (tuple(dict.fromkeys(v for v, _ in entries)), ", ".join(o for _, o in entries))
            for name, entries in found.items()}


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, text) of each requirement: comments cut, ``\\`` continuations joined."""
    lines, pending, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append((start, (pending + line).strip()))
        pending = ""
    if pending:
        lines.append((start, pending.strip()))
    return lines


def _requirement(text: str, where: str, problems: list[str]) -> tuple[str, SpecifierSet] | None:
    """(normalised name, specifiers) of one requirement; an unreadable one is a problem, and
    if its name can be told, that package counts as undeclared (any version)."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        name = _NAME.match(text)
        said = f"; {canonicalize_name(name.group(1))} counts as undeclared (any version)" if name else ""
        problems.append(f"{where}: cannot read requirement {text!r} ({str(exc).splitlines()[0]}){said}")
        return (canonicalize_name(name.group(1)), SpecifierSet()) if name else None
    return canonicalize_name(requirement.name), requirement.specifier


def _pyproject(root: Path, problems: list[str]) -> Tier:
    path = root / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        project = read_toml(path, "configuration").get("project", {})
    except PackError as exc:
        problems.append(f"{exc}; its dependencies are ignored")
        return {}
    if not isinstance(project, dict):
        return {}
    main = _requirement_table(project.get("dependencies", []), f"{path} [project] dependencies", problems)
    extras = project.get("optional-dependencies", {})
    per_extra = {name: _requirement_table(deps, f"{path} [project.optional-dependencies] {name}", problems)
                 for name, deps in (extras.items() if isinstance(extras, dict) else ())}
    tier: Tier = {}
    for package in set(main).union(*per_extra.values()):
        versions, origins = [], []
        if package in main:
            versions.append(main[package])
            origins.append("dependencies")
        for extra, table in sorted(per_extra.items()):
            if package in table:
                versions.append(str(SpecifierSet(table[package]) & SpecifierSet(main.get(package, ""))))
                origins.append(f"optional-dependencies.{extra}")
        tier[package] = (tuple(dict.fromkeys(versions)), f"{path.name} [project] {', '.join(origins)}")
    return tier


def _requirement_table(requirements: object, where: str, problems: list[str]) -> dict[str, str]:
    if not isinstance(requirements, list):
        problems.append(f"{where}: expected a list of requirement strings; ignored")
        return {}
    table: dict[str, SpecifierSet] = {}
    for text in requirements:
        parsed = _requirement(text, where, problems) if isinstance(text, str) else None
        if parsed is not None:
            table[parsed[0]] = table.get(parsed[0], SpecifierSet()) & parsed[1]
    return {name: str(specifiers) for name, specifiers in table.items()}


def condition_packages(vocab: Vocabulary) -> set[str]:
    """The packages the vocabulary's version conditions name: the only ones read."""
    specs = [*vocab.sources, *vocab.kinds.values()]
    return {applies.package for spec in specs for applies in spec.lends_in} | \
        {applies.package for guard in vocab.guards for applies in guard.checks_in}


def apply_declarations(vocab: Vocabulary, declarations: Declarations) -> Vocabulary:
    """``vocab`` for this project: a source that lends in no admitted version is left out
    (its values are owned) and listed in ``not_lending``; one that lends in some says under
    which versions, and the requirement that leaves them out."""
    sources, kinds, not_lending = [], dict(vocab.kinds), list(vocab.not_lending)
    for spec in vocab.sources:
        verdict = _verdict(spec.lends_in, declarations)
        if verdict is None:
            sources.append(spec)
        elif isinstance(verdict, str):
            not_lending.append((", ".join(map(str, spec.calls + spec.attributes)), verdict))
        else:
            sources.append(dataclasses.replace(spec, condition=verdict[0], admitted=verdict[1], floor=verdict[2]))
    for name, kind in vocab.kinds.items():
        verdict = _verdict(kind.lends_in, declarations)
        if isinstance(verdict, str):
            kinds[name] = dataclasses.replace(kind, lends=False)
            not_lending.append((f"values marked {' or '.join(kind.markers) or name}", verdict))
        elif verdict is not None:
            kinds[name] = dataclasses.replace(kind, condition=verdict[0], admitted=verdict[1], floor=verdict[2])
    guards, not_checking = _checking_guards(vocab, declarations)
    return dataclasses.replace(vocab, sources=sources, kinds=kinds, not_lending=not_lending, guards=guards,
                               not_checking=not_checking)


def _checking_guards(vocab: Vocabulary, declarations: Declarations) -> tuple[list, list[tuple[str, str]]]:
    """The guards, less those that check the marker only in versions the project admits none
    of (``checks-in``): called there, they let marked values through (SGLang 0.5.16's
    ``should_async_load``), so a call deciding a hand-off by one is unguarded. A guard that
    checks in some admitted version is taken at its word."""
    guards, not_checking = [], list(vocab.not_checking)
    for guard in vocab.guards:
        verdict = _verdict(guard.checks_in, declarations)
        if isinstance(verdict, str):
            not_checking.append((", ".join(map(str, guard.calls)), verdict.replace("lends only in", "checks only in")))
        else:
            guards.append(guard)
    return guards, not_checking


def _verdict(ranges: tuple[VersionRange, ...], declarations: Declarations) -> str | tuple[str, str, str] | None:
    """None: lends in every version; a string: lends in no admitted version (why); else the
    condition under which it lends, what the project declares, and the requirements that
    leave those versions out (any one of them does), in words."""
    if not ranges:
        return None
    admitted, floors = [], []
    for applies in ranges:
        declared = declarations.declared(applies.package)
        if declared is not None and not declared.admits_some(applies):
            return f"lends only in {' and '.join(map(str, ranges))}; {declared.describe()} ({declared.origin}) admits none"
        if declared is None:
            admitted.append(f"nothing declares {applies.package}")
        else:
            admitted.append(f"{declared.describe()} in {declared.origin} admits it")
        floor = floor_fix(applies.specifiers())
        if floor:
            floors.append(f"{applies.package}{floor}")
    return f"with {' and '.join(map(str, ranges))}", ", ".join(admitted), " or ".join(floors)