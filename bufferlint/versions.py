"""Version ranges: does a project's declaration admit a version in which a pack entry applies?

Both sides are PEP 440 specifier sets (``packaging``'s parser; bufferlint parses no version
itself). Whether two sets admit a common version is decided without a list of real
releases: the intersection ``A & B`` is one specifier set, and the versions it admits form
intervals whose ends are the versions its specifiers name. Within an interval membership does
not change, so it is enough to test each named version, a version just above it and one just
below it (``0.17`` -> ``0.17.0.1`` and ``0.16.999999``), a very low and a very high version:
if none of these is admitted, no version is. Pre-releases follow PEP 440 as pip does: a set
admits them only when one of its specifiers names a pre-release (``>=0.17.0rc1``).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

LOWEST = Version("0.dev0")
HIGHEST = Version("999999")
_STEP = 999999  # the last part of a version just below another: 0.17 -> 0.16.999999


@dataclass(frozen=True)
class VersionRange:
    """The versions of one package in which a pack entry applies: ``package`` (a normalised
    distribution name) and ``versions`` (a specifier set as written, ``"<0.17"``)."""

    package: str
    versions: str

    def specifiers(self) -> SpecifierSet:
        return SpecifierSet(self.versions)

    def __str__(self) -> str:
        return f"{self.package}{self.versions}"


def version_ranges(value: object, where: str) -> tuple[VersionRange, ...]:
    """One ``{ package, versions }`` table, or an array of them that must all hold
    (vLLM's RunAI iterator lends only with a streamer older than 0.17 *and* a vLLM older
    than 0.22, which clones each tensor it yields); ValueError naming ``where``."""
    if isinstance(value, list):
        if not value:
            raise ValueError(f"{where}: expected a table or a non-empty array of tables")
        ranges = tuple(version_range(item, f"{where}[{i}]") for i, item in enumerate(value))
        if len({r.package for r in ranges}) != len(ranges):
            raise ValueError(f"{where}: one condition per package (put its specifiers in one set)")
        return ranges
    return (version_range(value, where),)


def version_range(value: object, where: str) -> VersionRange:
    """A ``{ package = "...", versions = "..." }`` table, validated; ValueError naming ``where``."""
    if not isinstance(value, dict) or set(value) != {"package", "versions"}:
        raise ValueError(f"{where}: expected {{ package = \"name\", versions = \"<0.17\" }}")
    package, versions = value["package"], value["versions"]
    if not isinstance(package, str) or not package or not isinstance(versions, str):
        raise ValueError(f"{where}: 'package' and 'versions' must be strings")
    try:
        SpecifierSet(versions)
    except InvalidSpecifier as exc:
        raise ValueError(f"{where}: versions: {exc}") from None
    return VersionRange(canonicalize_name(package), versions)


def overlap(admitted: SpecifierSet, applies: SpecifierSet) -> bool:
    """Does some version satisfy both sets (the module's method)?"""
    both = admitted & applies
    return any(both.contains(candidate) for candidate in _candidates(both))


def _candidates(specifiers: SpecifierSet) -> list[Version]:
    found = [LOWEST, HIGHEST]
    for spec in specifiers:
        for version in _named_versions(spec):
            found += [version, _above(version)]
            below = _below(version)
            if below is not None:
                found.append(below)
    return found


def _named_versions(spec: Specifier) -> list[Version]:
    """The versions a specifier names: its own, and for ``~=X.Y`` its upper end ``X+1``."""
    text = spec.version[:-2] if spec.version.endswith(".*") else spec.version
    try:
        version = Version(text)
    except InvalidVersion:  # `===` of a string that is no PEP 440 version
        return []
    named = [version]
    if version.is_prerelease or version.is_postrelease:  # 0.17.0rc1: also its final release
        named.append(Version(version.base_version))
    if spec.operator == "~=" and len(version.release) >= 2:
        named.append(Version(".".join(map(str, (*version.release[:-2], version.release[-2] + 1)))))
    if spec.version.endswith(".*"):  # ==0.16.*: the next release up ends the prefix
        named.append(Version(".".join(map(str, (*version.release[:-1], version.release[-1] + 1)))))
    return named


def _above(version: Version) -> Version:
    """A version just above ``version`` and below its next release (0.17 -> 0.17.0.1)."""
    return Version(".".join(map(str, (*version.release, 0, 1))))


def _below(version: Version) -> Version | None:
    """A version just below ``version`` (0.17 -> 0.16.999999); None below 0 (0.0)."""
    release = list(version.release)
    while release and release[-1] == 0:
        release.pop()
    if not release:
        return None
    release[-1] -= 1
    return Version(".".join(map(str, (*release, _STEP))))


def floor_fix(applies: SpecifierSet) -> str | None:
    """The lower bound that leaves every version of ``applies`` out, when ``applies`` is an
    upper bound (``<0.17`` -> ``>=0.17``, ``<=0.16.4`` -> ``>0.16.4``); None otherwise."""
    bounds = list(applies)
    if len(bounds) != 1:
        return None
    flipped = {"<": ">=", "<=": ">"}.get(bounds[0].operator)
    return f"{flipped}{bounds[0].version}" if flipped else None
