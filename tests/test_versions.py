"""Version conditions: the overlap of specifier sets decided without a list of releases, the
floor that leaves a range out, and the order in which a project's declarations are read."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from bufferlint.config import ConfigError, load_settings
from bufferlint.declarations import read_declarations
from bufferlint.versions import floor_fix, overlap
from conftest import write

STREAMER = "runai-model-streamer"


@pytest.mark.parametrize("admitted, applies, expected", [
    (">=0.17", "<0.17", False),
    (">=0.15.7", "<0.17", True),
    ("==0.16.2", "<0.17", True),
    ("==0.17.0", "<0.17", False),
    ("==0.17", "<0.17", False),
    ("~=0.16", "<0.17", True),  # >=0.16, ==0.*
    ("~=0.17", "<0.17", False),
    ("~=0.16.2", ">=0.17", False),  # >=0.16.2, ==0.16.*
    ("==0.16.*", "<0.17", True),
    ("==0.16.*", ">=0.17", False),
    (">0.16.9,<0.17", "<0.17", True),  # 0.16.9.x, 0.16.10, ...
    (">=0.16,!=0.16.*", "<0.17", False),
    ("!=0.16.2", "<0.17", True),
    ("==0.16.2,!=0.16.2", "", False),  # admits nothing at all
    ("<=0.17", ">=0.17", True),
    ("<0.17", ">=0.17", False),
    (">0.17", "<=0.17", False),
    ("", "<0.17", True),  # nothing declared: any version
    # Pre-releases: a set admits them only when one of its specifiers names one (PEP 440).
    (">=0.17.0rc1", "<0.17", False),  # 0.17.0rc1 is not below 0.17 for `<0.17`
    (">=0.17.0rc1", "<0.17.0", False),
    (">=0.17.0rc1", "<=0.17.0rc2", True),
    ("<0.17", ">=0.17.0rc1", False),
    ("===0.16.2", "<0.17", True),
    ("===custom", "<0.17", False),
])
def test_overlap(admitted: str, applies: str, expected: bool) -> None:
    assert overlap(SpecifierSet(admitted), SpecifierSet(applies)) is expected


@pytest.mark.parametrize("applies, floor", [("<0.17", ">=0.17"), ("<=0.16.4", ">0.16.4"), (">=0.17", None),
                                            (">=0.15,<0.17", None)])
def test_floor_fix(applies: str, floor: str | None) -> None:
    assert floor_fix(SpecifierSet(applies)) == floor


def declared(root: Path, assumed: dict[str, str] | None = None):
    return read_declarations(root, {STREAMER}, assumed or {}, "pyproject.toml: [tool.bufferlint] assume-versions")


PYPROJECT = """\
[project]
name = "app"
version = "1"
dependencies = ["runai-model-streamer>=0.15.7"]
[project.optional-dependencies]
fast = ["runai-model-streamer>=0.16; python_version >= '3.10'"]
"""


def test_pyproject_dependencies_and_extras(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": PYPROJECT})
    found = declared(tmp_path).declared(STREAMER)
    assert found.versions == (">=0.15.7", ">=0.15.7,>=0.16")  # without the extra, and with it
    assert found.origin == "pyproject.toml [project] dependencies, optional-dependencies.fast"


def test_an_extra_alone_constrains_only_its_installs(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project]\nname='a'\nversion='1'\n"
                                       "[project.optional-dependencies]\nrunai = ['runai_model_streamer>=0.17']\n"})
    assert declared(tmp_path).declared(STREAMER).versions == (">=0.17",)


def test_resolution_order_lock_then_requirements_then_pyproject_then_assumed(tmp_path: Path) -> None:
    assumed = {STREAMER: ">=0.17"}
    assert declared(tmp_path, assumed).declared(STREAMER).versions == (">=0.17",)
    write(tmp_path, {"pyproject.toml": PYPROJECT})
    assert declared(tmp_path, assumed).declared(STREAMER).origin.startswith("pyproject.toml")
    write(tmp_path, {"requirements-dev.txt": "# dev\nrunai-model-streamer==0.16.2  # pinned\n-e .\n",
                     "requirements.txt": "torch\nrunai-model-streamer>=0.16 \\\n    ,<0.18\n"})
    found = declared(tmp_path, assumed).declared(STREAMER)
    assert found.versions == ("==0.16.2", "<0.18,>=0.16") and found.origin == "requirements-dev.txt, requirements.txt"
    write(tmp_path, {"uv.lock": 'version = 1\n[[package]]\nname = "runai-model-streamer"\nversion = "0.17.1"\n'})
    found = declared(tmp_path, assumed).declared(STREAMER)
    assert (found.versions, found.origin) == (("==0.17.1",), "uv.lock")


@pytest.mark.parametrize("name, text", [
    ("poetry.lock", '[[package]]\nname = "Runai_Model_Streamer"\nversion = "0.16.0"\n'),
    ("pylock.toml", 'lock-version = "1.0"\n[[packages]]\nname = "runai-model-streamer"\nversion = "0.16.0"\n'),
    ("pylock.gpu.toml", 'lock-version = "1.0"\n[[packages]]\nname = "runai-model-streamer"\nversion = "0.16.0"\n'),
])
def test_lock_files(tmp_path: Path, name: str, text: str) -> None:
    write(tmp_path, {name: text, "pyproject.toml": PYPROJECT})
    found = declared(tmp_path).declared(STREAMER)
    assert (found.versions, found.origin) == (("==0.16.0",), name)


def test_nothing_declared_means_any_version(tmp_path: Path) -> None:
    write(tmp_path, {"requirements.txt": "torch>=2\n"})
    assert declared(tmp_path).declared(STREAMER) is None


def test_unreadable_declarations_are_problems_naming_the_file_and_count_as_undeclared(tmp_path: Path) -> None:
    write(tmp_path, {"requirements.txt": "runai-model-streamer>=0.15.7,<<0.17\n",
                     "uv.lock": "[[package]\nname = 'x'\n",
                     "pyproject.toml": "[project]\nname='a'\nversion='1'\ndependencies=['runai-model-streamer>=0.17']\n"})
    result = declared(tmp_path)
    assert result.declared(STREAMER).versions == ("",)  # the requirement that cannot be read: any version
    assert len(result.problems) == 2
    assert result.problems[0].startswith(f"{tmp_path / 'uv.lock'}: invalid TOML")
    assert result.problems[1].startswith(f"{tmp_path / 'requirements.txt'}:1: cannot read requirement")
    assert "counts as undeclared (any version)" in result.problems[1] and "\n" not in result.problems[1]


def test_assume_versions_is_validated(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nassume-versions = { "runai-model-streamer" = ">=0.17,<<1" }\n'})
    with pytest.raises(ConfigError, match=r"pyproject.toml: \[tool.bufferlint\] assume-versions 'runai-model-streamer'"):
        load_settings(tmp_path)


def test_settings_leave_out_sources_no_admitted_version_lends(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.bufferlint]\nassume-versions = { "runai-model-streamer" = ">=0.17" }\n'})
    vocab = load_settings(tmp_path).vocab
    iterator = "sglang.srt.model_loader.weight_utils.runai_safetensors_weights_iterator"
    assert not any(str(p) == iterator for spec in vocab.sources for p in spec.calls)
    assert any(iterator in pattern for pattern, _ in vocab.not_lending)
    get_tensors = [spec for spec in vocab.sources if spec.calls[0].last_name == "get_tensors"]
    assert [list(map(str, spec.lends_in)) for spec in get_tensors] == [["runai-model-streamer>=0.17"]]


VLLM_ITERATOR = "vllm.model_executor.model_loader.weight_utils.runai_safetensors_weights_iterator"


def _vllm_iterator(vocab):
    return [spec for spec in vocab.sources if any(str(p) == VLLM_ITERATOR for p in spec.calls)]


@pytest.mark.parametrize("dependencies, lends", [
    ('["vllm>=0.22"]', False),  # the iterator clones: owned whatever the streamer
    ('["runai-model-streamer>=0.17"]', False),  # the streamer owns
    ('["vllm==0.21.0", "runai-model-streamer==0.16.0"]', True),  # both old: it lends
    ('[]', True),  # nothing declared: any version, so it may lend
])
def test_a_source_lends_only_where_every_condition_holds(tmp_path: Path, dependencies: str, lends: bool) -> None:
    write(tmp_path, {"pyproject.toml": f'[project]\nname = "p"\nversion = "1"\ndependencies = {dependencies}\n'})
    vocab = load_settings(tmp_path).vocab
    found = _vllm_iterator(vocab)
    assert bool(found) is lends
    if lends:
        assert found[0].condition == "with runai-model-streamer<0.17 and vllm<0.22"
        assert found[0].floor == "runai-model-streamer>=0.17 or vllm>=0.22"
    else:
        assert any(VLLM_ITERATOR in pattern for pattern, _ in vocab.not_lending)


@pytest.mark.parametrize("lends_in, message", [
    ("[]", "expected a table or a non-empty array of tables"),
    ('[{ package = "x", versions = "<1" }, { package = "x", versions = ">0" }]', "one condition per package"),
])
def test_a_list_of_conditions_is_validated(tmp_path: Path, lends_in: str, message: str) -> None:
    write(tmp_path, {
        "pyproject.toml": '[tool.bufferlint]\nrule-packs = ["pack.toml"]\n',
        "pack.toml": f'[[sources]]\ncall = "lib.read"\nlends-in = {lends_in}\n',
    })
    with pytest.raises(ConfigError, match=message):
        load_settings(tmp_path)
