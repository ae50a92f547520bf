"""A producer that lends only in some versions of its library (runai-model-streamer before
0.17), checked on projects that declare those versions in each way, with real runs of
``python -m bufferlint``: silent where no admitted version lends, reported with the condition
and the floor fix first where some do, and never a stale cached answer after the declaration
changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, write

# The shipped pack's two RunAI producers: SGLang's iterator (never passes `owned`) and the
# streamer itself.
LOADERS = {
    "sglang_loader.py": """\
from concurrent.futures import ThreadPoolExecutor

from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def load(files, model):
    pool = ThreadPoolExecutor()
    for name, tensor in runai_safetensors_weights_iterator(files):
        pool.submit(model.load_one, name, tensor)
""",
    "streamer_loader.py": """\
from concurrent.futures import ThreadPoolExecutor

from runai_model_streamer import SafetensorsStreamer


def load(paths, model):
    pool = ThreadPoolExecutor()
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(paths)
        for name, tensor in streamer.get_tensors():
            pool.submit(model.load_one, name, tensor)


def load_borrowed(paths, model):
    pool = ThreadPoolExecutor()
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(paths, owned=False)
        for name, tensor in streamer.get_tensors():
            pool.submit(model.load_one, name, tensor)
""",
    # SGLang's own iterator marks what the streamer yields, in every version.
    "marking_loader.py": """\
from concurrent.futures import ThreadPoolExecutor


def stream(tensors):
    for name, tensor in tensors:
        setattr(tensor, "_sglang_runai_streamer_tensor", True)
        yield name, tensor


def load(tensors, model):
    pool = ThreadPoolExecutor()
    for name, tensor in stream(tensors):
        pool.submit(model.load_one, name, tensor)
""",
}
ALL_SITES = [("marking_loader.py", 13), ("sglang_loader.py", 9), ("streamer_loader.py", 11), ("streamer_loader.py", 19)]


def pyproject(*dependencies: str, table: str = "") -> str:
    return f"[project]\nname = 'app'\nversion = '1'\ndependencies = {list(dependencies)!r}\n{table}"


def check(root: Path, *extra: str) -> dict:
    proc = run_cli("check", "--format", "json", "--exit-zero", *extra, ".", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def sites(report: dict) -> list[tuple[str, int]]:
    return sorted((f["path"], f["line"]) for f in report["findings"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path, LOADERS)
    return tmp_path


@pytest.mark.parametrize("declaration", [
    {"pyproject.toml": pyproject("runai-model-streamer>=0.17")},
    {"requirements.txt": "runai-model-streamer==0.17.1\n"},
    {"uv.lock": 'version = 1\n[[package]]\nname = "runai-model-streamer"\nversion = "0.17.1"\n',
     "pyproject.toml": pyproject("runai-model-streamer>=0.15.7")},
    {"pyproject.toml": "[tool.bufferlint]\nassume-versions = { 'runai-model-streamer' = '>=0.17' }\n"},
])
def test_no_admitted_version_lends_so_only_an_explicit_owned_false_is_reported(project: Path, declaration: dict) -> None:
    write(project, declaration)
    assert sites(check(project, "--no-cache")) == [("streamer_loader.py", 19)]


@pytest.mark.parametrize("declaration, admits", [
    ({"pyproject.toml": pyproject("runai-model-streamer>=0.15.7")},
     "runai-model-streamer>=0.15.7 in pyproject.toml [project] dependencies admits it"),
    ({}, "nothing declares runai-model-streamer"),
    ({"requirements.txt": "runai-model-streamer~=0.16.0\n"}, "runai-model-streamer~=0.16.0 in requirements.txt admits it"),
])
def test_some_admitted_version_lends_so_the_findings_say_which_and_the_floor_fix_first(
        project: Path, declaration: dict, admits: str) -> None:
    write(project, declaration)
    report = check(project, "--no-cache")
    assert sites(report) == ALL_SITES
    for finding in report["findings"]:
        if finding["line"] == 19:
            continue  # streamed with owned=False: lends in every version
        assert finding["message"].startswith(
            f"with runai-model-streamer<0.17 only ({admits}, raise the floor: `runai-model-streamer>=0.17`): ")
        assert finding["trace"][0]["note"].endswith(" of a reused buffer) with runai-model-streamer<0.17"
                                                    if finding["path"] == "marking_loader.py" else
                                                    " of a reused buffer with runai-model-streamer<0.17")


def test_an_unreadable_declaration_is_reported_and_counts_as_undeclared(project: Path) -> None:
    write(project, {"requirements.txt": "runai-model-streamer>=0.17,<<1\n"})
    proc = run_cli("check", "--exit-zero", ".", cwd=project)
    assert "Traceback" not in proc.stderr
    assert "requirements.txt:1: cannot read requirement 'runai-model-streamer>=0.17,<<1'" in proc.stderr
    assert len(check(project, "--no-cache")["findings"]) == len(ALL_SITES)


def test_show_settings_lists_the_declared_versions_and_their_origin(project: Path) -> None:
    write(project, {"pyproject.toml": pyproject("runai-model-streamer>=0.17")})
    proc = run_cli("check", "--show-settings", ".", cwd=project)
    assert proc.returncode == 0, proc.stderr
    listing = proc.stdout.split("[declared versions]\n", 1)[1]
    assert listing.startswith("  instanttensor: any version  (nothing declares it)\n")  # each package a pack names, by name
    assert (
        "  runai-model-streamer: runai-model-streamer>=0.17  (pyproject.toml [project] dependencies)\n"
        "  sglang: any version  (nothing declares it)\n"  # a guard's ``checks-in`` names it
        "  vllm: any version  (nothing declares it)\n"
        "  owned, not a source: sglang.srt.model_loader.weight_utils.runai_safetensors_weights_iterator"
    ) in listing
    # a source with two conditions is owned when the project rules out either
    assert ("owned, not a source: vllm.model_executor.model_loader.weight_utils.runai_safetensors_weights_iterator: "
            "lends only in runai-model-streamer<0.17 and vllm<0.22; runai-model-streamer>=0.17") in listing


def test_a_guard_that_checks_in_no_admitted_version_is_listed_as_no_guard(project: Path) -> None:
    """SGLang 0.5.16's ``should_async_load`` approves marked tensors (its ``checks-in``)."""
    write(project, {"pyproject.toml": pyproject("sglang==0.5.16")})
    proc = run_cli("check", "--show-settings", ".", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert ("  lets marked values through, not a guard: sglang.srt.model_loader.utils.should_async_load: "
            "checks only in sglang>=0.5.17; sglang==0.5.16") in proc.stdout


def test_a_warm_run_after_the_declaration_changes_equals_a_cold_one(project: Path) -> None:
    write(project, {"requirements.txt": "runai-model-streamer>=0.15.7\n"})
    first = check(project)
    assert len(first["findings"]) == len(ALL_SITES)
    write(project, {"requirements.txt": "runai-model-streamer>=0.17\n"})  # only the declaration changes
    warm = check(project)
    assert warm == check(project, "--no-cache") and sites(warm) == [("streamer_loader.py", 19)]
    write(project, {"requirements.txt": "runai-model-streamer>=0.16\n"})
    warm = check(project)
    assert warm == check(project, "--no-cache") and "runai-model-streamer>=0.16 in requirements.txt" in \
        warm["findings"][0]["message"]


GUARD = {"sglang/srt/model_loader/utils.py": "def should_async_load(weight):\n    return True\n",
         "sglang/__init__.py": "", "sglang/srt/__init__.py": "", "sglang/srt/model_loader/__init__.py": ""}


@pytest.mark.parametrize("declared, reported", [("runai-model-streamer>=0.15.7", True), ("runai-model-streamer>=0.17", False)])
def test_a_guard_that_ignores_the_marker_matters_only_where_marked_values_are_borrowed(
        tmp_path: Path, declared: str, reported: bool) -> None:
    write(tmp_path, {**GUARD, "requirements.txt": declared + "\n"})
    findings = check(tmp_path, "--no-cache")["findings"]
    assert [f["rule"] for f in findings] == (["BL002"] if reported else [])
    if reported:
        assert findings[0]["message"].startswith(
            f"with runai-model-streamer<0.17 only ({declared} in requirements.txt admits it, raise the floor: ")
