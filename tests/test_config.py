from pathlib import Path

import pytest

from bufferlint.config import DEFAULT_EXCLUDE, ConfigError, Settings, load_settings, rule_selectors
from bufferlint.packs import builtin_vocabulary
from conftest import write

PACK = """\
pack = { name = "mine", description = "our own streamer" }
markers = ["_borrowed_from_ring"]

[[sources]]
call = "ring.RingBuffer.read"
produces = "borrowed"
"""


def test_defaults_without_pyproject(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert settings.root == tmp_path and settings.config_path is None
    assert settings.select == ("BL",) and settings.ignore == ()
    assert settings.excludes == DEFAULT_EXCLUDE
    assert settings.vocab.markers == builtin_vocabulary().markers


def test_pyproject_without_table_uses_defaults(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    settings = load_settings(tmp_path)
    assert settings.config_path == tmp_path / "pyproject.toml"
    assert settings.excludes == DEFAULT_EXCLUDE


def test_own_keys(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": """\
[tool.bufferlint]
select = ["BL0"]
ignore = ["BL002"]
exclude = ["generated"]
extend-exclude = ["*_pb2.py"]
"""})
    settings = load_settings(tmp_path)
    assert settings.select == ("BL0",) and settings.ignore == ("BL002",)
    assert settings.excludes == ("generated", "*_pb2.py")


def test_extend_exclude_keeps_defaults(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nextend-exclude = ["tests/fixtures"]\n'})
    assert load_settings(tmp_path).excludes == DEFAULT_EXCLUDE + ("tests/fixtures",)


def test_rule_packs_and_inline_vocabulary_are_merged(tmp_path: Path) -> None:
    write(tmp_path, {
        "pyproject.toml": """\
[tool.bufferlint]
rule-packs = ["packs/mine.toml"]
markers = ["_inline_marker"]
sanitizers = ["ring.copy_out"]
""",
        "packs/mine.toml": PACK,
    })
    vocab = load_settings(tmp_path).vocab
    assert {"_sglang_runai_streamer_tensor", "_borrowed_from_ring", "_inline_marker"} <= vocab.markers
    assert any(p.qualname == "ring.RingBuffer.read" for s in vocab.sources for p in s.calls)
    assert any(p.qualname == "ring.copy_out" for s in vocab.sanitizers for p in s.calls)
    assert f"{tmp_path / 'pyproject.toml'}: [tool.bufferlint]" in vocab.packs


def test_explicit_config_path(tmp_path: Path) -> None:
    write(tmp_path, {"conf/shared.toml": '[tool.bufferlint]\nrule-packs = ["mine.toml"]\n', "conf/mine.toml": PACK})
    settings = load_settings(tmp_path, tmp_path / "conf/shared.toml")
    assert settings.config_path == tmp_path / "conf/shared.toml"
    assert "_borrowed_from_ring" in settings.vocab.markers  # pack path relative to that file


def test_explicit_config_path_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read configuration \(No such file or directory\)"):
        load_settings(tmp_path, tmp_path / "missing.toml")


def _error(tmp_path: Path, files: dict[str, str]) -> str:
    write(tmp_path, files)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_invalid_toml(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": "[tool.bufferlint\n"})
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: invalid TOML (")


def test_unknown_key(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nselekt = ["BL001"]\n'})
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: [tool.bufferlint]: unknown key(s) 'selekt'")


def test_bad_select_code(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nselect = ["BL001", "E501"]\n'})
    assert message == (
        f"{tmp_path / 'pyproject.toml'}: [tool.bufferlint] select: unknown rule code or prefix 'E501' "
        "(known rules: BL001, BL002, BL003, BL004, BL005, BL006)"
    )


def test_select_must_be_a_list(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nignore = "BL001"\n'})
    assert "ignore: expected a list of rule codes" in message


def test_exclude_must_be_strings(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": "[tool.bufferlint]\nexclude = [1]\n"})
    assert message.endswith("'exclude' must be a list of non-empty strings")


def test_missing_pack(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nrule-packs = ["nope.toml"]\n'})
    assert message == f"{tmp_path / 'pyproject.toml'}: [tool.bufferlint] rule-packs: {tmp_path / 'nope.toml'} does not exist"


def test_invalid_pack(tmp_path: Path) -> None:
    message = _error(tmp_path, {
        "pyproject.toml": '[tool.bufferlint]\nrule-packs = ["bad.toml"]\n',
        "bad.toml": '[[sinks]]\ncall = "not a pattern!"\n',
    })
    assert message.startswith(f"{tmp_path / 'bad.toml'}: sinks[0].call: not a call pattern")


def test_invalid_inline_vocabulary(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": '[tool.bufferlint]\n[[tool.bufferlint.guards]]\ncall = "x.y"\nparam = -1\n'})
    assert message == f"{tmp_path / 'pyproject.toml'}: [tool.bufferlint]: guards[0]: 'param' must be a non-negative argument index"


def test_table_must_be_a_table(tmp_path: Path) -> None:
    message = _error(tmp_path, {"pyproject.toml": '[tool]\nbufferlint = 3\n'})
    assert message.endswith("[tool.bufferlint] must be a table")


@pytest.mark.parametrize(
    ("select", "ignore", "enabled"),
    [
        (("BL",), (), {"BL001", "BL002"}),
        (("BL",), ("BL002",), {"BL001"}),
        (("BL001",), (), {"BL001"}),
        (("BL002",), ("BL",), {"BL002"}),  # the more specific selector wins
        (("BL00",), ("BL00",), set()),  # ties go to ignore
        ((), (), set()),
    ],
)
def test_rule_selection(tmp_path: Path, select: tuple, ignore: tuple, enabled: set) -> None:
    settings = Settings(vocab=builtin_vocabulary(), root=tmp_path, select=select, ignore=ignore)
    assert {code for code in ("BL001", "BL002") if settings.is_enabled(code)} == enabled


@pytest.mark.parametrize(
    ("select", "extend_select", "ignore", "enabled"),
    [
        (("BL",), (), (), False),  # the default: a prefix never selects a preview rule
        (("BL00",), (), (), False),
        (("BL",), ("BL006",), (), True),
        (("BL006",), (), (), True),
        (("BL",), ("BL006",), ("BL006",), False),  # ties go to ignore, as for every rule
    ],
)
def test_a_preview_rule_runs_only_when_selected_by_its_code(tmp_path: Path, select: tuple, extend_select: tuple,
                                                            ignore: tuple, enabled: bool) -> None:
    from bufferlint.catalog import RULES

    previews = [code for code, rule in RULES.items() if rule.preview]
    assert previews == ["BL006"]
    settings = Settings(vocab=builtin_vocabulary(), root=tmp_path, select=select, extend_select=extend_select,
                        ignore=ignore)
    assert settings.is_enabled("BL006") is enabled
    assert settings.is_enabled("BL005") is any("BL005".startswith(s) for s in select + extend_select)


def test_rule_selectors_rejects_empty_code() -> None:
    with pytest.raises(ConfigError, match="unknown rule code or prefix ''"):
        rule_selectors([""], "--select")


def test_the_engine_is_given_only_the_vocabulary_the_rules_in_effect_use(tmp_path: Path) -> None:
    """``pinned-allocations`` serves BL006 alone: without BL006 the analysis tracks no pinned
    buffer (and analyses no function for writing one); with it, every entry is there."""
    vocab = builtin_vocabulary()
    assert vocab.pinned_allocations
    default = Settings(vocab=vocab, root=tmp_path)
    assert default.analysed_vocab().pinned_allocations == []
    assert default.analysed_vocab().host_writes == vocab.host_writes  # refills are producers: every rule's
    assert default.vocab.pinned_allocations == vocab.pinned_allocations  # --show-settings lists it still
    selected = Settings(vocab=vocab, root=tmp_path, extend_select=("BL006",))
    assert selected.analysed_vocab() is vocab


@pytest.mark.parametrize(
    ("kind", "problem"),
    [
        ('name = "shard"\nmarked-classes = ["shards.StreamedShard"]\n', "'marked-classes' needs the kind's 'markers'"),
        ('name = "shard"\nmarkers = ["_b"]\nmarked-classes = ["StreamedShard"]\n', "must be qualified class names"),
    ],
)
def test_marked_classes_are_qualified_and_belong_to_a_marked_kind(tmp_path: Path, kind: str, problem: str) -> None:
    message = _error(tmp_path, {"pyproject.toml": f"[tool.bufferlint]\n[[tool.bufferlint.kinds]]\n{kind}"})
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: [tool.bufferlint]: kinds[0]: ")
    assert problem in message
