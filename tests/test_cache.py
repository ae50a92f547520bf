"""The persistent cache: a warm run gives exactly what a cold run gives, reuses the last
analysis only when the changed files cannot matter to it, and never trusts or crashes on a
damaged, foreign or unwritable cache. Real runs of ``python -m bufferlint`` throughout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bufferlint.analysis import analyze_project
from bufferlint.cache import Cache, cache_directory, fingerprint, tool_fingerprint
from bufferlint.packs import builtin_vocabulary
from conftest import REPO, run_cli

CORPUS = REPO / "tests" / "fixtures" / "analysis"
# The cases the tests edit (``direct_submit.py``, ``one_finding_per_bug.py``,
# ``guards_evaluated.py``), the multi-module projects of the corpus (calls across files,
# packages, imports) and one case of each device rule: sources, helpers, guards, bugs of
# every kind in 32 files. A cold run of the whole corpus costs about ten times as much, and
# most tests here run several; ``test_the_whole_corpus_warm_is_cold`` keeps one check of it.
SAMPLE = ["direct_submit.py", "one_finding_per_bug.py", "guards_evaluated.py", "aliasing.py", "host_reuse.py",
          "device_to_host.py", "cross_module", "broken_guard", "fixed_guard", "objects_and_bindings",
          "wrapped_loaders"]


def _broken(root: Path) -> Path:
    (root / "pyproject.toml").write_text("[tool.bufferlint]\n")
    (root / "broken.py").write_text("def oops(:\n    pass\n")  # an error, cached as one
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A sample of the analysis fixture corpus as one project (``SAMPLE``), and a file that
    does not parse."""
    root = tmp_path / "corpus"
    root.mkdir()
    for name in SAMPLE:
        if (CORPUS / name).is_dir():
            shutil.copytree(CORPUS / name, root / name, ignore=shutil.ignore_patterns("*.expected", "__pycache__"))
        else:
            shutil.copy(CORPUS / name, root / name)
    return _broken(root)


def test_the_whole_corpus_warm_is_cold(tmp_path: Path) -> None:
    """Every fixture of the corpus as one project: a warm run after a cold one, and after an
    edit of a file the analysis reads, prints what ``--no-cache`` prints."""
    root = tmp_path / "corpus"
    shutil.copytree(CORPUS, root, ignore=shutil.ignore_patterns("*.expected", "__pycache__"))
    _broken(root)
    cold = check(root, timeout=600)  # the whole corpus: about 13 s of CPU, more on a loaded machine
    assert cold["findings"] and cold["errors"]
    assert check(root, timeout=600) == cold
    target = root / "direct_submit.py"
    target.write_text(target.read_text().replace("        futures = []\n", "        futures = []\n        count = 0\n", 1))
    assert check(root, timeout=600) == check(root, "--no-cache", timeout=600)


def check(root: Path, *extra: str, timeout: float = 60) -> dict:
    proc = run_cli("check", "--format", "json", "--exit-zero", *extra, ".", cwd=root, timeout=timeout)
    assert proc.returncode in (0, 2), proc.stderr
    return json.loads(proc.stdout)


def test_warm_runs_give_what_the_cold_run_gives(project: Path) -> None:
    cold = check(project, "--no-cache")
    assert not (project / ".bufferlint_cache").exists()  # --no-cache writes nothing
    assert cold["findings"] and cold["errors"]
    first = check(project)  # cold, writing the cache
    assert (project / ".bufferlint_cache" / "run.json").is_file()
    assert (project / ".bufferlint_cache" / ".gitignore").read_text().strip().endswith("*")
    second = check(project)  # warm, nothing changed
    assert first == cold
    assert second == cold


def test_a_file_the_analysis_did_not_read_is_checked_alone(project: Path) -> None:
    unrelated = project / "unrelated.py"
    unrelated.write_text("def area(r):\n    return 3.14 * r * r\n")
    check(project)
    unrelated.write_text("def area(radius):\n    return 3.14 * radius * radius\n")
    check(project)
    assert _reused(project)
    unrelated.write_text("def area(r:\n")  # now broken: its own check runs again
    warm = check(project)
    assert _reused(project)
    assert warm == check(project, "--no-cache")
    assert any(e["path"] == "unrelated.py" for e in warm["errors"])


def test_a_change_that_can_matter_runs_the_analysis_again(project: Path) -> None:
    check(project)
    helper = project / "late_helper.py"
    helper.write_text("# placeholder\n")
    check(project)  # a new file: analysed again, recorded
    helper.write_text(
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator\n\n"
        "def load(files):\n"
        "    pool = ThreadPoolExecutor(4)\n"
        "    for name, w in runai_safetensors_weights_iterator(files):\n"
        "        pool.submit(print, w)\n"
    )  # now it mentions the source: it must be parsed, and its bug found
    warm = check(project)
    assert not _reused(project)
    assert warm == check(project, "--no-cache")
    assert any(f["path"] == "late_helper.py" and f["rule"] == "BL001" for f in warm["findings"])


def test_a_change_naming_an_argument_bound_source_runs_the_analysis_again(project: Path) -> None:
    """Sources that match only with their arguments (BL005's non-blocking copies) select a
    file by a group of words: the cache asks a changed file the same question."""
    host = project / "host_read.py"
    host.write_text("def stats(t):\n    return t\n")
    check(project)
    host.write_text('def stats(t):\n    h = t.to("cpu", non_blocking=True)\n    return h.tolist()\n')
    warm = check(project)
    assert not _reused(project)
    assert warm == check(project, "--no-cache")
    assert any(f["path"] == "host_read.py" and f["rule"] == "BL005" for f in warm["findings"])


def test_a_parsed_file_edited_runs_the_analysis_again(project: Path) -> None:
    check(project)
    target = project / "direct_submit.py"
    target.write_text(target.read_text() + "\n\ndef added():\n    return None\n")
    warm = check(project)
    assert not _reused(project)
    assert warm == check(project, "--no-cache")


def _record(project: Path) -> dict:
    return json.loads((project / ".bufferlint_cache" / "run.json").read_text())["body"]


def test_an_edit_outside_the_analysed_functions_moves_the_findings(project: Path) -> None:
    """The pre-commit case: ``forward`` of a model edited, its ``load_weights`` untouched."""
    target = project / "direct_submit.py"
    text = target.read_text()
    helper = "def describe(x):\n    return str(x)\n\n\n"
    target.write_text(text.replace("def load(", helper + "def load(", 1))
    check(project)
    # Two more lines in a function the analysis never interpreted, and a comment above
    # everything: every finding of the file moves down, nothing else changes.
    edited = target.read_text().replace("    return str(x)\n", "    text = repr(x)\n    # shown in logs\n    return text\n", 1)
    target.write_text("# a comment\n" + edited)
    warm = check(project)
    record = _record(project)
    assert record["reused"] and record["moved"] == ["direct_submit.py"]
    cold = check(project, "--no-cache")
    assert warm == cold
    assert any(f["path"] == "direct_submit.py" and f["line"] == 24 for f in warm["findings"])  # was 21
    assert check(project) == cold  # and again, from the moved record


def test_a_call_its_guard_stands_for_moves_with_the_guard_when_the_file_moves(project: Path) -> None:
    """A covered BL001 (one finding per bug) is kept in the record with its guards' spans:
    a comment above them moves both, and the reused run still gives the call back when
    only BL001 is selected."""
    target = project / "one_finding_per_bug.py"
    check(project)
    target.write_text("# a comment\n# and another\n" + target.read_text())
    warm = check(project)
    record = _record(project)
    assert record["reused"] and record["moved"] == ["one_finding_per_bug.py"]
    assert warm == check(project, "--no-cache")
    assert any(f["path"] == "one_finding_per_bug.py" and f["line"] == 22 and f["rule"] == "BL002" for f in warm["findings"])
    calls = check(project, "--select", "BL001")
    assert calls == check(project, "--select", "BL001", "--no-cache")
    assert {f["line"] for f in calls["findings"] if f["path"] == "one_finding_per_bug.py"} >= {59, 64}


@pytest.mark.parametrize("edit, replayed", [
    # what the analysis computes of it stays (the futures are never read after the loop)
    (("            future.result()", "            pass"), True),
    # the views are kept, not submitted: another outcome (the finding goes)
    (("futures.append(executor.submit(params[name].copy_, weight))", "futures.append(weight)"), False),
    # a method the recorded analyses never looked up: a question without a recorded answer
    (("            future.result()", "            future.describe()"), False),
    # calls of names outside the project (builtins): their answers need no record
    (("        futures = []\n", "        futures = []\n        print(len(futures))\n"), True),
    # a copy where the view was submitted: the finding goes, nothing else the function tells
    # others changes (its summary, writes, calls): the findings of its sites are computed
    # again from the replayed outcome (``analysis.cutoff``)
    (("executor.submit(params[name].copy_, weight)", "executor.submit(params[name].copy_, weight.clone())"), True),
])
def test_an_edit_of_an_analysed_function_is_replayed_only_if_it_does_what_it_did(
        project: Path, edit: tuple[str, str], replayed: bool) -> None:
    check(project)
    target = project / "direct_submit.py"
    target.write_text(target.read_text().replace(*edit, 1))
    warm = check(project)
    assert _record(project)["reused"] is replayed
    assert warm == check(project, "--no-cache")


KEEPING_MODEL = {
    "pyproject.toml": "[tool.bufferlint]\n",
    "app/__init__.py": "",
    "app/stream.py": (
        'MARKER = "_sglang_runai_streamer_tensor"\n\n\n'
        "def stream(tensors):\n"
        "    for name, tensor in tensors:\n"
        "        setattr(tensor, MARKER, True)\n"
        "        yield name, tensor\n"
    ),
    "app/model.py": (
        "class Model:\n"
        "    def __init__(self, params):\n"
        "        self.params = params\n\n"
        "    def load_weights(self, weights):\n"
        "        for name, weight in weights:\n"
        "            self.params[name].copy_(weight)\n"
    ),
    "app/loader.py": (
        "from app.model import Model\n"
        "from app.stream import stream\n\n\n"
        "def load(params, tensors):\n"
        "    model = Model(params)\n"
        "    model.load_weights(stream(tensors))\n"
        "    return model\n"
    ),
}


def test_a_weight_kept_in_a_field_nothing_reads_is_cut_off_at_the_edited_method(tmp_path: Path) -> None:
    """``self._last = weight`` added to a loader's method: the class now stores into a
    field nobody reads or asks about, and the method's summary starts keeping its
    parameter there (its caller's analysis reads that). The edit is replayed with its
    caller (``analysis.cutoff``), not analysed afresh, and prints what ``--no-cache``
    prints; so does taking the line out again."""
    for name, text in KEEPING_MODEL.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    model = tmp_path / "app" / "model.py"
    original = model.read_text()
    assert check(tmp_path)["findings"] == []
    model.write_text(original.replace("            self.params", "            self._last = weight\n            self.params"))
    warm = check(tmp_path)
    assert _record(tmp_path)["reused"] and _record(tmp_path)["replayed"] == ["app/model.py"]
    assert warm == check(tmp_path, "--no-cache")
    assert [(f["rule"], f["line"]) for f in warm["findings"]] == [("BL003", 7)]
    model.write_text(original)
    assert check(tmp_path) == check(tmp_path, "--no-cache")
    assert _record(tmp_path)["reused"]


def test_a_kept_weight_that_changes_the_order_of_the_analyses_is_cut_off_at_the_end_state(tmp_path: Path) -> None:
    """``self._kept = weight`` in a loader another model's loader calls by method name: the
    wrapper's summary now changes at its first analysis, so a run from scratch visits the
    functions in another order than the recorded one. The cut-off replays the last
    analyses with the final summaries instead (``cutoff._CutOff``'s ``settled``) and prints
    what ``--no-cache`` prints."""
    shutil.copytree(REPO / "tests" / "fixtures" / "analysis" / "wrapped_loaders", tmp_path / "project")
    root = tmp_path / "project"
    (root / "pyproject.toml").write_text("[tool.bufferlint]\n")
    check(root)
    llama = root / "app" / "llama.py"
    llama.write_text(llama.read_text().replace("            self.params", "            self._kept = weight\n            self.params"))
    warm = check(root)
    assert _record(root)["reused"] and _record(root)["replayed"] == ["app/llama.py"]
    assert warm == check(root, "--no-cache")
    assert ("BL003", "app/llama.py", 7) in {(f["rule"], f["path"], f["line"]) for f in warm["findings"]}


def test_a_syntax_error_in_an_edited_file_the_analysis_read_is_reported(project: Path) -> None:
    check(project)
    target = project / "direct_submit.py"
    target.write_text(target.read_text() + "\ndef broken(:\n")
    warm = check(project)
    assert not _record(project)["reused"]
    assert warm == check(project, "--no-cache")
    assert any(e["path"] == "direct_submit.py" for e in warm["errors"])


@pytest.mark.parametrize("edit", [
    # it now defines a nested function (which may be analysed)
    ("    return str(x)\n", "    def inner():\n        return x\n    return str(inner())\n"),
    # it now names the marker: a function that mentions a pack word is analysed
    ("    return str(x)\n", "    return getattr(x, MARKER, None)\n"),
    # its signature changed: calls by name may bind differently
    ("def describe(x):", "def describe(x, y=None):"),
])
def test_an_edit_changing_what_the_analysis_reads_runs_it_again(project: Path, edit: tuple[str, str]) -> None:
    target = project / "direct_submit.py"
    target.write_text(target.read_text().replace("def load(", "def describe(x):\n    return str(x)\n\n\ndef load(", 1))
    check(project)
    target.write_text(target.read_text().replace(*edit, 1))
    warm = check(project)
    assert not _record(project)["reused"]
    assert warm == check(project, "--no-cache")


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"format": 1, "key": "other", "body": {}}',
                                    b'{"format": 1, "key": "KEY", "body": {"manifest": 7, "result": []}}'])
def test_a_damaged_or_foreign_cache_is_rebuilt(project: Path, damage: bytes) -> None:
    cold = check(project, "--no-cache")
    check(project)
    folder = project / ".bufferlint_cache"
    key = json.loads((folder / "run.json").read_text())["key"]
    for name in ("run.json", "files.json"):
        (folder / name).write_bytes(damage.replace(b"KEY", key.encode()))
    assert check(project) == cold
    assert json.loads((folder / "run.json").read_text())["key"] == key  # rewritten whole
    assert check(project) == cold


def test_concurrent_runs_share_the_cache_safely(project: Path) -> None:
    cold = check(project, "--no-cache")
    env_path = str(REPO)
    runs = [
        subprocess.Popen([sys.executable, "-m", "bufferlint", "check", "--format", "json", "--exit-zero", "."],
                         cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**__import__("os").environ, "PYTHONPATH": env_path})
        for _ in range(3)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [json.loads(out) for out, _ in outputs] == [cold] * 3
    for name in ("run.json", "files.json"):
        json.loads((project / ".bufferlint_cache" / name).read_text())  # whole files, never torn
    assert check(project) == cold


def test_cache_location_setting_and_environment(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.bufferlint]\ncache-dir = "build/lint-cache"\n')
    check(project)
    assert (project / "build" / "lint-cache" / "run.json").is_file()
    assert not (project / ".bufferlint_cache").exists()
    elsewhere = tmp_path / "env-cache"
    proc = subprocess.run([sys.executable, "-m", "bufferlint", "check", "--exit-zero", "-q", "."], cwd=project,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO), "BUFFERLINT_CACHE_DIR": str(elsewhere)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr  # 2: broken.py
    assert (elsewhere / "run.json").is_file()


def test_bad_cache_dir_setting_is_a_config_error(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.bufferlint]\ncache-dir = 3\n")
    proc = run_cli("check", ".", cwd=project)
    assert proc.returncode == 2
    assert "cache-dir" in proc.stderr and "Traceback" not in proc.stderr


def test_an_unwritable_cache_costs_the_cache_not_the_run(project: Path) -> None:
    blocker = project / "not-a-folder"
    blocker.write_text("a file where the cache folder should go\n")
    (project / "pyproject.toml").write_text('[tool.bufferlint]\ncache-dir = "not-a-folder/cache"\n')
    proc = run_cli("check", "--format", "json", "--exit-zero", ".", cwd=project)
    result = json.loads(proc.stdout)
    assert result["findings"] == check(project, "--no-cache")["findings"]
    assert any("cache not written" in notice for notice in result["notices"])


def test_keys_differ_for_other_vocabularies_and_roots(tmp_path: Path) -> None:
    vocab = builtin_vocabulary()
    base = fingerprint(tool_fingerprint(), vocab, str(tmp_path), 5)
    assert base == fingerprint(tool_fingerprint(), builtin_vocabulary(), str(tmp_path), 5)  # stable
    vocab.markers.add("_my_marker")
    assert fingerprint(tool_fingerprint(), vocab, str(tmp_path), 5) != base
    assert fingerprint(tool_fingerprint(), builtin_vocabulary(), str(tmp_path / "x"), 5) != base


def test_api_with_cache_reports_only_the_files_asked_for(project: Path) -> None:
    """pre-commit passes a few files: the recorded analysis (all files) serves any subset."""
    files = sorted(project.rglob("*.py"))
    cache = Cache(cache_directory(project), fingerprint(tool_fingerprint(), builtin_vocabulary(), str(project), 5))
    everything = analyze_project(project, files, files, builtin_vocabulary(), cache)
    one = project / "direct_submit.py"
    warm = analyze_project(project, files, [one], builtin_vocabulary(), cache)
    cold = analyze_project(project, files, [one], builtin_vocabulary())
    assert warm.findings == cold.findings == [f for f in everything.findings if f.path == one]
    assert warm.errors == cold.errors


def _reused(root: Path) -> bool:
    """Did the last run reuse the recorded analysis? (It records how it got its result.)"""
    return json.loads((root / ".bufferlint_cache" / "run.json").read_text())["body"]["reused"]


def test_the_collector_stays_paused_until_the_analysis_is_released(project: Path, monkeypatch) -> None:
    """The record is written while the analysis's state is still held: a cyclic collection
    then would walk all of it (bufferlint.gcpause). It resumes afterwards."""
    import gc

    seen: list[bool] = []
    save = Cache.save

    def save_and_look(self, name: str, body: dict) -> None:
        seen.append(gc.isenabled())
        save(self, name, body)

    monkeypatch.setattr(Cache, "save", save_and_look)
    files = sorted(project.rglob("*.py"))
    cache = Cache(cache_directory(project), fingerprint(tool_fingerprint(), builtin_vocabulary(), str(project), 5))
    assert gc.isenabled()
    analyze_project(project, files, files, builtin_vocabulary(), cache)
    assert seen and not any(seen)  # paused while the analysis wrote its record
    assert gc.isenabled()


def _cache(project: Path) -> Cache:
    return Cache(cache_directory(project), fingerprint(tool_fingerprint(), builtin_vocabulary(), str(project), 5))


def test_a_warm_run_reads_only_the_files_whose_stat_changed(project: Path, monkeypatch) -> None:
    """Reading and hashing every file was most of a warm run on a large tree: a file whose
    size, times and inode are those recorded is not read again."""
    from bufferlint.analysis.incremental import cached

    monkeypatch.setattr(cached, "RACY_NS", 0)  # these files were all written a moment ago
    edited = project / "unrelated.py"
    edited.write_text("def area(r):\n    return 3.14 * r * r\n")
    files = sorted(project.rglob("*.py"))
    analyze_project(project, files, files, builtin_vocabulary(), _cache(project))
    edited.write_text("def area(radius):\n    return 3.14 * radius * radius\n")
    read: list[Path] = []
    original = cached.read_bytes
    monkeypatch.setattr(cached, "read_bytes", lambda path: read.append(path) or original(path))
    files = sorted(project.rglob("*.py"))
    analyze_project(project, files, [edited], builtin_vocabulary(), _cache(project))
    assert read == [edited]


def test_an_edit_that_keeps_the_size_and_modification_time_is_seen(project: Path, monkeypatch) -> None:
    """The change time cannot be set back: the same size and a restored modification time
    still read the file again, and the warm result is the cold one."""
    import os

    from bufferlint.analysis.incremental import cached

    monkeypatch.setattr(cached, "RACY_NS", 0)
    buggy = project / "direct_submit.py"
    text = buggy.read_text()
    assert "executor.submit(" in text
    files = sorted(project.rglob("*.py"))
    first = analyze_project(project, files, [buggy], builtin_vocabulary(), _cache(project))
    assert first.findings
    before = os.stat(buggy)
    buggy.write_text(text.replace("executor.submit(", "executor.sub_it("))  # the same size: no sink now
    os.utime(buggy, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(buggy).st_size == before.st_size and os.stat(buggy).st_mtime_ns == before.st_mtime_ns
    warm = analyze_project(project, files, [buggy], builtin_vocabulary(), _cache(project))
    cold = analyze_project(project, files, [buggy], builtin_vocabulary())
    assert warm.findings == cold.findings != first.findings


def test_an_editor_overlay_is_read_whatever_the_stat_says(project: Path, monkeypatch) -> None:
    """An unsaved buffer (``source.overlaid``) is not what the file's stat describes."""
    from bufferlint.analysis.incremental import cached
    from bufferlint.source import overlaid

    monkeypatch.setattr(cached, "RACY_NS", 0)
    buggy = project / "direct_submit.py"
    files = sorted(project.rglob("*.py"))
    assert analyze_project(project, files, [buggy], builtin_vocabulary(), _cache(project)).findings
    unsaved = buggy.read_text().replace("executor.submit(", "print(")
    with overlaid({buggy: unsaved}):
        warm = analyze_project(project, files, [buggy], builtin_vocabulary(), _cache(project))
        cold = analyze_project(project, files, [buggy], builtin_vocabulary())
    assert warm.findings == cold.findings
    after = analyze_project(project, files, [buggy], builtin_vocabulary(), _cache(project))
    assert after.findings == analyze_project(project, files, [buggy], builtin_vocabulary()).findings


def test_a_full_warm_check_after_one_file_runs_checks_the_rest_in_workers(project: Path, monkeypatch) -> None:
    """pre-commit runs check only the files they name; the first full check afterwards
    syntax-checks all the others (in worker processes, as a cold run does) and reports what
    a cold run reports."""
    from bufferlint.analysis.frontend import syntax_check

    monkeypatch.setattr(syntax_check, "PARALLEL_FROM", 2)  # the pool, even for this small project
    files = sorted(project.rglob("*.py"))
    analyze_project(project, files, [project / "direct_submit.py"], builtin_vocabulary(), _cache(project))
    warm = analyze_project(project, files, files, builtin_vocabulary(), _cache(project))
    cold = analyze_project(project, files, files, builtin_vocabulary())
    assert any(error.path.name == "broken.py" for error in warm.errors)
    assert warm.errors == cold.errors and warm.findings == cold.findings


def test_an_edit_inside_an_analysed_function_that_keeps_its_effects_is_replayed(project: Path) -> None:
    """A line added to ``load`` (analysed): the function is interpreted again against what
    each recorded analysis of it read, writes and produces the same, so the recorded
    analysis holds with the findings after the new line moved down; then a second edit on
    top of the first, and one that changes what ``load`` does (analysed again)."""
    check(project)
    target = project / "direct_submit.py"
    text = target.read_text()
    target.write_text(text.replace("        futures = []\n", "        futures = []\n        count = 0  # new\n", 1))
    warm = check(project)
    record = _record(project)
    assert record["reused"] and record["replayed"] == ["direct_submit.py"]
    assert warm == check(project, "--no-cache")
    assert any(f["path"] == "direct_submit.py" and f["line"] == 18 for f in warm["findings"])  # was 17
    target.write_text(target.read_text().replace("        for future in futures:\n", "        for future in list(futures):\n", 1))
    warm = check(project)
    assert _record(project)["replayed"] == ["direct_submit.py"]
    assert warm == check(project, "--no-cache")
    target.write_text(target.read_text().replace("executor.submit(params[name].copy_, weight)", "weight", 1))
    warm = check(project)
    assert not _record(project)["reused"]
    assert warm == check(project, "--no-cache")


def test_an_added_line_sharing_a_number_with_a_finding_is_analysed_again(project: Path) -> None:
    """The added line is numbered after the finding's line while replaying: their trace
    steps could not be told apart, so the recorded findings are not reused."""
    check(project)
    target = project / "direct_submit.py"
    marked = "futures.append(executor.submit(params[name].copy_, weight))  # expect: BL001\n"
    target.write_text(target.read_text().replace(marked, marked + "            count = 0\n", 1))
    warm = check(project)
    assert not _record(project)["reused"]
    assert warm == check(project, "--no-cache")


def test_a_run_that_analyses_again_rewrites_only_the_logs_that_changed(project: Path) -> None:
    """A miss records the whole analysis again, but most files' logs are what the last run
    wrote: those documents are left as they are (the same inode: not replaced), and the
    record still ties them to itself (an edit replays against them)."""
    check(project)
    folder = project / ".bufferlint_cache" / "replay"
    before = {path.name: path.stat().st_ino for path in folder.glob("*.json")}
    (project / "new_unrelated.py").write_text("def area(r):\n    return 3.14 * r * r\n")  # a new file: analysed again
    check(project)
    assert not _reused(project)
    after = {path.name: path.stat().st_ino for path in folder.glob("*.json")}
    kept = [name for name, inode in after.items() if before.get(name) == inode]
    assert len(kept) > len(after) // 2
    target = project / "direct_submit.py"
    target.write_text(target.read_text().replace("        futures = []\n", "        futures = []\n        count = 0\n", 1))
    warm = check(project)
    assert _record(project)["replayed"]
    assert warm == check(project, "--no-cache")


def test_logs_written_by_another_run_are_not_replayed(project: Path) -> None:
    """Concurrent runs each write the logs of their own analysis; a record trusts only its own."""
    check(project)
    for path in (project / ".bufferlint_cache" / "replay").glob("*.json"):
        body = json.loads(path.read_text())
        body["body"]["run"] = "another"
        path.write_text(json.dumps(body))
    target = project / "direct_submit.py"
    target.write_text(target.read_text().replace("        futures = []\n", "        futures = []\n        count = 0\n", 1))
    warm = check(project)
    assert not _record(project)["reused"]
    assert warm == check(project, "--no-cache")


def test_a_replayed_file_not_read_again_by_the_scan_is_still_replayed(project: Path, monkeypatch) -> None:
    """After a replayed run, the edited file's stat is recorded: the next run's scan vouches
    for it without reading it, and the replay reads it itself (the analysed version is the
    one it compares with, so the edit is still an edit)."""
    from bufferlint.analysis.incremental import cached

    monkeypatch.setattr(cached, "RACY_NS", 0)
    files = sorted(project.rglob("*.py"))
    cold = analyze_project(project, files, files, builtin_vocabulary(), _cache(project))
    target = project / "direct_submit.py"
    target.write_text(target.read_text().replace("        futures = []\n", "        futures = []\n        count = 0\n", 1))
    analyze_project(project, files, files, builtin_vocabulary(), _cache(project))
    assert _record(project)["replayed"] == ["direct_submit.py"]
    read: list[Path] = []
    original = cached.read_bytes
    monkeypatch.setattr(cached, "read_bytes", lambda path: read.append(path) or original(path))
    again = analyze_project(project, files, files, builtin_vocabulary(), _cache(project))
    assert _record(project)["replayed"] == ["direct_submit.py"] and read == [target]
    assert again.errors == cold.errors
    assert [(f.rule, f.path, f.span.line) for f in again.findings] == [
        (f.rule, f.path, f.span.line + (f.path == target and f.span.line > 15)) for f in cold.findings]


def test_selecting_a_rule_whose_vocabulary_was_left_out_does_not_reuse_the_cache(tmp_path: Path) -> None:
    """A run without BL006 analyses without ``pinned-allocations``: a warm run that selects
    BL006 must not replay it, and finds what a cold one finds."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(CORPUS / "host_reuse.py", root / "host_reuse.py")
    (root / "pyproject.toml").write_text("[tool.bufferlint]\n")
    assert check(root)["findings"] == []  # BL006 is a preview rule: nothing else is here
    cold = check(root, "--no-cache", "--extend-select", "BL006")
    assert {f["rule"] for f in cold["findings"]} == {"BL006"}
    assert check(root, "--extend-select", "BL006") == cold


def test_a_notice_about_a_file_is_told_when_that_file_is_reported(project: Path) -> None:
    """A guard left undecided is told when its file is reported on: the record (made
    reporting every file) keeps the file with the notice, and a warm run reporting other
    files does not tell it, as a cold run of them does not."""
    check(project)
    for paths in (["direct_submit.py"], ["guards_evaluated.py"]):
        runs = [run_cli("check", "--format", "json", "--exit-zero", *extra, *paths, cwd=project) for extra in ((), ("--no-cache",))]
        warm, cold = (json.loads(proc.stdout) for proc in runs)
        assert warm == cold
        told = any("names_unknown" in notice for notice in warm["notices"])
        assert told is (paths == ["guards_evaluated.py"])
