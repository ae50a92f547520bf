"""One report per root cause (bufferlint.grouping): findings from one producer are one group
in every format; the text report shows the producer, its versions, the fix there and each
site on one line; JSON and SARIF keep one result per site, linked by a stable group id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bufferlint.findings import BY_NAME, Finding, Span, TraceStep, preferred_trace
from bufferlint.grouping import group_findings, group_ids
from conftest import run_cli, write
from test_formats import schema, valid

PYPROJECT = '''\
[project]
name = "demo"
dependencies = ["runai-model-streamer>=0.15.7"]
'''

# One producer (line 7), two loaders that misuse what it hands out: a thread pool (BL001)
# and a dict kept across the loop (BL003).
WEIGHTS = '''\
from runai_model_streamer import SafetensorsStreamer


def stream(files):
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for name, tensor in streamer.get_tensors():
            yield name, tensor
'''
LOADERS = '''\
import concurrent.futures

from demo.weights import stream


def load_async(files, fn):
    with concurrent.futures.ThreadPoolExecutor() as executor:
        for name, w in stream(files):
            executor.submit(fn, w)


def load_kept(files):
    kept = {}
    for name, w in stream(files):
        kept[name] = w
    return kept
'''
# A second producer of the same kind, and a loader of its own.
OTHER = '''\
import concurrent.futures

from runai_model_streamer import SafetensorsStreamer


def load_other(files, fn):
    with SafetensorsStreamer() as streamer, concurrent.futures.ThreadPoolExecutor() as executor:
        streamer.stream_files(files)
        for name, w in streamer.get_tensors():
            executor.submit(fn, w)
'''


@pytest.fixture
def one_source(tmp_path: Path) -> Path:
    write(tmp_path, {"pyproject.toml": PYPROJECT, "demo/__init__.py": "", "demo/weights.py": WEIGHTS,
                     "demo/loaders.py": LOADERS})
    return tmp_path


@pytest.fixture
def two_sources(one_source: Path) -> Path:
    write(one_source, {"demo/other.py": OTHER})
    return one_source


def findings_json(root: Path) -> dict:
    proc = run_cli("check", "--no-cache", "--format", "json", ".", cwd=root)
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)


def test_two_loaders_of_one_producer_are_one_group(one_source: Path) -> None:
    report = findings_json(one_source)
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [
        ("BL001", "demo/loaders.py", 9), ("BL003", "demo/loaders.py", 15),
    ]
    first, second = report["findings"]
    assert first["group"] == second["group"]
    assert first["trace"][0]["line"] == second["trace"][0]["line"] == 7  # each keeps its own trace
    assert report["groups"] == [{
        "id": first["group"],
        "source": {"path": "demo/weights.py", "line": 7, "note": first["trace"][0]["note"]},
        "versions": "with runai-model-streamer<0.17 only (runai-model-streamer>=0.15.7 in pyproject.toml "
                    "[project] dependencies admits it)",
        "fix": "raise the floor: `runai-model-streamer>=0.17`; or have the producer hand out owned tensors "
               "(`stream_files(..., owned=True)`, runai-model-streamer >= 0.17); or copy each value where the "
               "producer hands it out (`value.clone()`)",
        "findings": 2,
    }]


def test_two_producers_are_two_groups(two_sources: Path) -> None:
    report = findings_json(two_sources)
    by_site = {(f["path"], f["line"]): f["group"] for f in report["findings"]}
    assert len(by_site) == 3
    assert by_site["demo/loaders.py", 9] == by_site["demo/loaders.py", 15] != by_site["demo/other.py", 10]
    assert [(g["source"]["path"], g["source"]["line"], g["findings"]) for g in report["groups"]] == [
        ("demo/weights.py", 7, 2), ("demo/other.py", 9, 1),
    ]


def test_group_ids_are_stable_across_line_moves_and_runs(two_sources: Path) -> None:
    before = {(f["path"], f["rule"]): f["group"] for f in findings_json(two_sources)["findings"]}
    assert {(f["path"], f["rule"]): f["group"] for f in findings_json(two_sources)["findings"]} == before
    write(two_sources, {"demo/weights.py": '"""Weights."""\n\nimport os\n\n' + WEIGHTS})
    assert {(f["path"], f["rule"]): f["group"] for f in findings_json(two_sources)["findings"]} == before


def test_sarif_links_the_results_of_a_group(two_sources: Path) -> None:
    proc = run_cli("check", "--no-cache", "--format", "sarif", ".", cwd=two_sources)
    log = json.loads(proc.stdout)
    valid(schema("sarif-schema-2.1.0.json"), log)
    results = log["runs"][0]["results"]
    groups = [r["properties"]["group"] for r in results]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [9, 15, 10]
    assert groups[0] == groups[1] != groups[2]
    assert groups == [f["group"] for f in findings_json(two_sources)["findings"]]  # one id in every format


def test_text_shows_a_group_once_with_its_sites(two_sources: Path) -> None:
    proc = run_cli("check", "--no-cache", ".", cwd=two_sources)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[:10] == [
        "demo/weights.py:7: 2 findings (1 BL001, 1 BL003) from one producer: `streamer.get_tensors(...)`",
        "  hands out borrowed views of a reused buffer with runai-model-streamer<0.17",
        "  with runai-model-streamer<0.17 only (runai-model-streamer>=0.15.7 in pyproject.toml [project]",
        "    dependencies admits it)",
        "  fix at the producer: raise the floor: `runai-model-streamer>=0.17`; or have the producer hand out",
        "    owned tensors (`stream_files(..., owned=True)`, runai-model-streamer >= 0.17); or copy each",
        "    value where the producer hands it out (`value.clone()`)",
        "  every trace starts the same:",
        "    demo/weights.py:8: yielded to the caller",
        "  2 sites (each with its trace in `--output-format json` or `sarif`):",
    ]
    sites = proc.stdout.splitlines()[10:12]
    assert sites == [
        "    demo/loaders.py:9:13: BL001 consumed asynchronously by `executor.submit`",
        "    demo/loaders.py:15:9: BL003 kept in `kept`, which outlives the producer's step",
    ]
    # the other producer's one finding is shown as every finding is, with its trace
    assert proc.stdout.splitlines()[12].startswith("demo/other.py:10:13: BL001 with runai-model-streamer<0.17 only")


def test_statistics_count_groups(two_sources: Path) -> None:
    proc = run_cli("check", "--no-cache", "--statistics", ".", cwd=two_sources)
    assert proc.stdout == (
        "2  BL001  borrowed-value-to-async-sink\n"
        "1  BL003  borrowed-view-outlives-step\n"
        "3 findings in 2 groups (one per producer)\n"
    )
    proc = run_cli("check", "--no-cache", "--statistics", "--format", "json", ".", cwd=two_sources)
    assert [(row["code"], row["count"], row["groups"]) for row in json.loads(proc.stdout)] == [
        ("BL001", 2, 2), ("BL003", 1, 1),
    ]


def test_a_finding_without_a_producer_is_a_group_of_its_own(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    write(tmp_path, {"m.py": "def guard(w):\n    return True\n\n\ndef other(w):\n    return True\n"})
    guards = [Finding("BL002", Span(mod, line, 1, line, 10), "m", f"m:{name}") for line, name in ((1, "guard"), (5, "other"))]
    source = TraceStep(mod, 1, "hands out", ("source", "torch", "borrowed"))
    sited = [Finding("BL001", Span(mod, 2, 5, 2, 9), "m", "m:guard", (source, TraceStep(mod, 2, "sunk")))]
    ids = group_ids(guards + sited, tmp_path)
    assert len(set(ids)) == 3
    assert [len(g.findings) for g in group_findings(guards + sited, tmp_path)] == [1, 1, 1]


# Two paths from one producer to one site: the project's own loader (through two helper
# generators) and a connector's shorter one, through a method of a receiver of unknown type.
MAIN_AND_CONNECTOR = {
    "pyproject.toml": PYPROJECT,
    "demo/__init__.py": "",
    "demo/weights.py": WEIGHTS,
    "demo/connector.py": '''\
from demo.weights import stream


class Connector:
    def weight_iterator(self, files):
        return stream(files)
''',
    "demo/loader.py": '''\
from demo.weights import stream


def prefixed(weights, prefix):
    for name, w in weights:
        yield prefix + name, w


def main_weights(files):
    yield from prefixed(stream(files), "model.")


def load(model, files):
    model.load_weights(main_weights(files))


def load_remote(model, client, files):
    model.load_weights(client.weight_iterator(files))
''',
    "demo/model.py": '''\
class Model:
    def load_weights(self, weights):
        self.kept = {}
        for name, w in weights:
            self.kept[name] = w
''',
}


def test_the_trace_is_one_of_the_paths_chosen_the_same_way_every_run(tmp_path: Path) -> None:
    """One site, one finding, whichever path the analysis met first: the shown trace is the
    preferred one (``findings.preferred_trace``), the same in every run."""
    write(tmp_path, MAIN_AND_CONNECTOR)
    first = findings_json(tmp_path)["findings"]
    assert [(f["rule"], f["path"], f["line"]) for f in first] == [("BL003", "demo/model.py", 5)]
    assert [step["path"] for step in first[0]["trace"]][:3] == ["demo/weights.py", "demo/weights.py", "demo/loader.py"]
    assert findings_json(tmp_path)["findings"] == first


def test_the_trace_prefers_the_main_entry_and_counts_the_other_paths(tmp_path: Path) -> None:
    """The connector's path is shorter but goes through ``client.weight_iterator(...)``, a
    call resolved only by method name: the main path, through direct calls, is shown."""
    write(tmp_path, MAIN_AND_CONNECTOR)
    (finding,) = findings_json(tmp_path)["findings"]
    assert ("demo/loader.py", 14) in [(step["path"], step["line"]) for step in finding["trace"]]
    assert finding["other_paths"] == 1


def test_the_other_paths_are_counted_in_the_text_and_after_a_cached_run(tmp_path: Path) -> None:
    write(tmp_path, MAIN_AND_CONNECTOR)
    text = run_cli("check", ".", cwd=tmp_path).stdout
    assert "(the most direct of 2 paths found into this site)" in text
    proc = run_cli("check", "--format", "json", ".", cwd=tmp_path)  # served by the cache
    (finding,) = json.loads(proc.stdout)["findings"]
    assert finding["other_paths"] == 1


def test_a_trace_through_fewer_calls_resolved_by_name_is_preferred_to_a_shorter_one() -> None:
    step = lambda line, fact=(): TraceStep(Path("m.py"), line, "", fact)  # noqa: E731
    direct = (step(1), step(2), step(3), step(4))
    guessed = (step(1), step(2, (BY_NAME,)), step(3))
    assert preferred_trace(direct, guessed) and not preferred_trace(guessed, direct)
    assert preferred_trace(direct[:3], direct) and not preferred_trace(direct, direct[:3])
    assert preferred_trace(direct, (step(1), step(2), step(3), step(5)))  # ties: by content
