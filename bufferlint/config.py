"""Project settings: ``[tool.bufferlint]`` in the project root's pyproject.toml.

The table mixes two kinds of keys. The ones in CONFIG_KEYS steer the run (which rules,
which files); every other key is rule-pack vocabulary and is validated by
``vocabulary_from_dict``, so a project describes its own zero-copy producers exactly the
way a shipped pack does. Any mistake is a ConfigError whose message names the file and
the key: a misconfigured run must stop rather than silently check less than asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bufferlint.catalog import RULES
from bufferlint.declarations import Declarations, apply_declarations, assumed_versions, condition_packages, read_declarations
from bufferlint.globs import exclude_matcher
from bufferlint.jobs import available_cpus
from bufferlint.source import MAX_BYTES
from bufferlint.packs import PackError, Vocabulary, builtin_vocabulary, load_pack, read_toml, vocabulary_from_dict

CONFIG_KEYS = frozenset({
    "rule-packs", "select", "extend-select", "ignore", "per-file-ignores", "exclude", "extend-exclude",
    "respect-gitignore", "force-exclude", "max-file-size", "cache-dir", "output-format", "assume-versions", "jobs",
})
OUTPUT_FORMATS = ("full", "concise", "text", "json", "sarif", "github", "rdjson", "rdjsonl")
"""``output-format`` / ``--output-format`` values; ``text`` is the old name of ``full``."""

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".ruff_cache",
    ".pytest_cache", "__pycache__", "build", "dist", "node_modules", "site-packages", ".eggs",
    "*.egg-info",
)


class ConfigError(Exception):
    """The configuration cannot be used; the message is one line naming file and problem."""


@dataclass
class Settings:
    vocab: Vocabulary
    root: Path
    config_path: Path | None = None  # the pyproject.toml that was read, if any
    select: tuple[str, ...] = ("BL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # (file pattern, rule selectors): findings of those rules in matching files are not reported
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True  # git-ignored files are neither analysed nor reported
    force_exclude: bool = False  # excludes apply to files named on the command line too (pre-commit)
    max_file_size: int = MAX_BYTES  # bytes; larger files are reported, not analysed
    cache_dir: Path | None = None  # `cache-dir`, relative to the configuration file's folder
    output_format: str | None = None  # `output-format`; None: the command's default (full)
    jobs: int | None = None  # processes a run may use (bufferlint.jobs); None: every available CPU
    # The declared versions of the packages the vocabulary's version conditions name
    # (bufferlint.declarations); ``vocab`` has been narrowed by them.
    declarations: Declarations = field(default_factory=Declarations)

    @property
    def excludes(self) -> tuple[str, ...]:
        return self.exclude + self.extend_exclude

    def analysed_vocab(self) -> Vocabulary:
        """The vocabulary the analysis is given: ``vocab`` without what only rules not
        enabled use (``--show-settings`` still lists all of ``vocab``)."""
        return self.vocab.for_rules(self.is_enabled)

    def is_enabled(self, code: str) -> bool:
        """Ruff's rule: the most specific matching selector decides, ``ignore`` wins ties.

        So ``select = ["BL"]`` with ``ignore = ["BL002"]`` runs BL001 only, and
        ``select = ["BL002"]`` with ``ignore = ["BL"]`` runs BL002 only. ``extend-select``
        adds to ``select`` (as in Ruff). A preview rule (``Rule.preview``) is selected only by
        its full code, never by a prefix.
        """
        rule = RULES.get(code)
        if rule is not None and rule.preview and code not in self.select + self.extend_select:
            return False
        selected = max((len(s) for s in self.select + self.extend_select if code.startswith(s)), default=-1)
        ignored = max((len(s) for s in self.ignore if code.startswith(s)), default=-1)
        return selected > ignored

    def ignored_in(self, code: str, relative: str) -> bool:
        """Whether ``per-file-ignores`` turns rule ``code`` off in the file at ``relative``
        (its path below the project root; patterns match it or its name, as excludes do)."""
        return any(exclude_matcher([pattern])(relative) and any(code.startswith(s) for s in selectors)
                   for pattern, selectors in self.per_file_ignores)


def rule_selectors(values: Any, where: str) -> tuple[str, ...]:
    """Validate a list of rule codes or code prefixes ("BL001", "BL0", "BL")."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{where}: expected a list of rule codes such as [\"BL001\"]")
    for value in values:
        if not value or not any(code.startswith(value) for code in RULES):
            raise ConfigError(f"{where}: unknown rule code or prefix {value!r} (known rules: {', '.join(RULES)})")
    return tuple(values)


def per_file_ignores(table: Any, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Validate ``{"tests/*" = ["BL003"], ...}``: file patterns to rule codes or prefixes."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: expected a table of file patterns to rule codes, such as "
                          "{\"tests/*\" = [\"BL003\"]}")
    return tuple((pattern, rule_selectors(codes, f"{where} {pattern!r}")) for pattern, codes in table.items())


def _string_list(table: dict, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of non-empty strings")
    return tuple(value)


def _read_table(pyproject: Path) -> dict | None:
    """The ``[tool.bufferlint]`` table of a pyproject.toml, or None when it has none."""
    try:
        data = read_toml(pyproject, "configuration")
    except PackError as exc:
        raise ConfigError(str(exc)) from None
    tool = data.get("tool", {})
    table = tool.get("bufferlint") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.bufferlint] must be a table")
    return table


def load_settings(root: Path, config_path: Path | None = None) -> Settings:
    """Settings for the project at ``root``: from ``config_path`` when given (it must
    exist), else from ``root/pyproject.toml`` when there is one, else the defaults; the
    vocabulary narrowed by the versions the project declares."""
    settings, assumed = _configured(root, config_path)
    where = f"{settings.config_path}: [tool.bufferlint] assume-versions"
    settings.declarations = read_declarations(root, condition_packages(settings.vocab), assumed, where)
    settings.vocab = apply_declarations(settings.vocab, settings.declarations)
    return settings


def _configured(root: Path, config_path: Path | None) -> tuple[Settings, dict[str, str]]:
    """The settings the configuration file states, and its ``assume-versions``."""
    pyproject = config_path if config_path is not None else root / "pyproject.toml"
    if config_path is None and not pyproject.is_file():
        return Settings(vocab=_builtin(), root=root), {}
    table = _read_table(pyproject)
    if table is None:
        return Settings(vocab=_builtin(), root=root, config_path=pyproject), {}

    where = f"{pyproject}: [tool.bufferlint]"
    try:
        inline = vocabulary_from_dict(table, origin=where, extra_keys=CONFIG_KEYS)
    except PackError as exc:
        raise ConfigError(str(exc)) from None
    settings = Settings(vocab=_builtin(), root=root, config_path=pyproject)
    try:
        for pack in _string_list(table, "rule-packs", where):
            settings.vocab.merge(_load_pack(pyproject.parent / pack, where))
        settings.vocab.merge(inline)
        settings.vocab.check_kinds()
    except PackError as exc:
        raise ConfigError(str(exc)) from None
    if "select" in table:
        settings.select = rule_selectors(table["select"], f"{where} select")
    if "extend-select" in table:
        settings.extend_select = rule_selectors(table["extend-select"], f"{where} extend-select")
    if "ignore" in table:
        settings.ignore = rule_selectors(table["ignore"], f"{where} ignore")
    if "per-file-ignores" in table:
        settings.per_file_ignores = per_file_ignores(table["per-file-ignores"], f"{where} per-file-ignores")
    for key in ("respect-gitignore", "force-exclude"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where} {key}: expected true or false, got {table[key]!r}")
            setattr(settings, key.replace("-", "_"), table[key])
    if "output-format" in table:
        if table["output-format"] not in OUTPUT_FORMATS:
            raise ConfigError(f"{where} output-format: expected one of {', '.join(OUTPUT_FORMATS)}, "
                              f"got {table['output-format']!r}")
        settings.output_format = table["output-format"]
    if "exclude" in table:
        settings.exclude = _string_list(table, "exclude", where)
    if "extend-exclude" in table:
        settings.extend_exclude = _string_list(table, "extend-exclude", where)
    if "max-file-size" in table:
        settings.max_file_size = file_size(table["max-file-size"], f"{where} max-file-size")
    if "jobs" in table:
        settings.jobs = job_count(table["jobs"], f"{where} jobs")
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str) or not table["cache-dir"]:
            raise ConfigError(f"{where} cache-dir: expected a folder name such as \".bufferlint_cache\"")
        settings.cache_dir = (pyproject.parent / Path(table["cache-dir"]).expanduser()).absolute()
    try:
        assumed = assumed_versions(table.get("assume-versions", {}), f"{where} assume-versions")
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return settings, assumed


def file_size(mib: Any, where: str) -> int:
    """A ``max-file-size`` in MiB (a positive number), as bytes."""
    if isinstance(mib, bool) or not isinstance(mib, (int, float)) or not 0 < mib < 2**20:
        raise ConfigError(f"{where}: expected a positive number of MiB such as 5 or 0.5, got {mib!r}")
    return int(mib * 1024 * 1024)


def job_count(jobs: Any, where: str) -> int:
    """A ``jobs`` value: how many processes a run may use (a positive whole number)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"{where}: expected a positive whole number of processes such as 2 (without it, every "
                          f"CPU this process may use: {available_cpus()} here), got {jobs!r}")
    return jobs


def _builtin() -> Vocabulary:
    try:
        return builtin_vocabulary()
    except PackError as exc:  # a broken installation, not the user's config
        raise ConfigError(f"shipped rule pack is invalid: {exc}") from None


def _load_pack(path: Path, where: str) -> Vocabulary:
    if not path.is_file():
        raise ConfigError(f"{where} rule-packs: {path} does not exist")
    try:
        return load_pack(path)
    except PackError as exc:
        raise ConfigError(str(exc)) from None
