"""The cache is invisible: after each edit people make (a comment, a space, a reformatted
call, another character before a sink), a warm run prints exactly what ``--no-cache`` prints,
and so do the commands that act on positions (``--add-noqa``, ``--baseline``). One test per
way a warm run once differed; each edits a small loader the analysis interprets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, write

LOADER = """\
import concurrent.futures

from runai_model_streamer import SafetensorsStreamer


def stream_into(files, weights):
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        with concurrent.futures.ThreadPoolExecutor(4) as workers:
            for key, view in streamer.get_tensors():
                workers.submit(weights[key].copy_, view)
"""


@pytest.fixture
def loader(tmp_path: Path) -> Path:
    write(tmp_path, {"pyproject.toml": "[tool.bufferlint]\n", "models/__init__.py": "", "models/loading.py": LOADER})
    return tmp_path


def run(root: Path, *args: str) -> tuple[int, str]:
    proc = run_cli("check", *args, ".", cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, proc.stdout


def edit(root: Path, old: str, new: str) -> None:
    path = root / "models" / "loading.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def assert_warm_is_cold(root: Path, *args: str) -> tuple[int, str]:
    warm = run(root, *args)
    assert warm == run(root, "--no-cache", *args)
    return warm


def test_a_comment_added_inside_an_interpreted_function_moves_its_findings(loader: Path) -> None:
    run(loader)
    edit(loader, "        with concurrent", "        # one pool for the whole stream\n        with concurrent")
    code, out = assert_warm_is_cold(loader, "--format", "json")
    assert code == 1 and json.loads(out)["findings"][0]["line"] == 12


@pytest.mark.parametrize("old, new", [
    ("weights[key].copy_, view)", "weights[key].copy_,  view)"),  # one space: another end column
    ("weights[key].copy_, view)", "\n                    weights[key].copy_,\n                    view,\n                )"),  # black's split
])
def test_a_formatting_edit_gives_the_new_spans_and_fixes(loader: Path, old: str, new: str) -> None:
    run(loader)
    edit(loader, old, new)
    code, out = assert_warm_is_cold(loader, "--format", "json")
    finding = json.loads(out)["findings"][0]
    assert code == 1 and finding["fix"] is not None


def test_a_comment_deleted_never_lets_an_unrelated_noqa_hide_a_finding(loader: Path) -> None:
    edit(loader, "                workers.submit", "                # hand each tensor over\n                workers.submit")
    edit(loader, "streamer.get_tensors():", "streamer.get_tensors():  # noqa")
    run(loader)
    edit(loader, "                # hand each tensor over\n", "")
    code, _ = assert_warm_is_cold(loader)
    assert code == 1


def test_a_baselined_finding_stays_baselined_after_lines_move(loader: Path) -> None:
    baseline = loader / "baseline.json"
    run(loader, "--write-baseline", str(baseline))
    edit(loader, "            for key", "            # every tensor of every file\n            for key")
    assert assert_warm_is_cold(loader, "--baseline", str(baseline))[0] == 0


def test_add_noqa_after_lines_moved_writes_the_finding_s_line(loader: Path) -> None:
    run(loader)
    edit(loader, "        with concurrent", "\n        with concurrent")
    cold_copy = loader.parent / "cold"
    write(cold_copy, {p.relative_to(loader).as_posix(): p.read_bytes() for p in loader.rglob("*.py")})
    write(cold_copy, {"pyproject.toml": "[tool.bufferlint]\n"})
    run(loader, "--add-noqa")
    run(cold_copy, "--no-cache", "--add-noqa")
    written = (loader / "models" / "loading.py").read_text()
    assert written == (cold_copy / "models" / "loading.py").read_text()
    assert "view)  # noqa" in written


def test_a_replayed_edit_gives_character_columns_of_the_new_text(loader: Path) -> None:
    """Four bytes either way, two characters against four: the same UTF-8 offsets."""
    edit(loader, "                workers.submit", '                tag = "éé"; workers.submit')
    run(loader)
    edit(loader, '"éé"', '"abcd"')
    code, out = assert_warm_is_cold(loader, "--format", "json")
    assert json.loads(out)["findings"][0]["column"] == 31


def test_a_method_asked_for_in_an_earlier_round_decides_reuse(tmp_path: Path) -> None:
    """``self.store.consume(view)`` is dispatched by name ("consume") while ``Store``'s class
    is unknown, and typed once ``backing.py`` is parsed in a later round: its last round no
    longer asks for "consume". A file the analysis did not read that now defines a
    ``consume`` keeping the view for a pool is still read by a cold run, so the warm one
    must analyse again (the reader imports it, so its class may be the receiver; its imports
    stay the same, so only the method asked for decides)."""
    write(tmp_path, {
        "pyproject.toml": "[tool.bufferlint]\n",
        "app/__init__.py": "",
        "app/reader.py": (
            "from runai_model_streamer import SafetensorsStreamer\n\nfrom app import spare\nfrom app.holder import Holder\n\n\n"
            "class Reader:\n    def __init__(self):\n        self.holder = Holder()\n\n"
            "    def read(self, files):\n        with SafetensorsStreamer() as streamer:\n"
            "            streamer.stream_files(files)\n            for _, view in streamer.get_tensors():\n"
            "                self.holder.check(view)\n                self.holder.store.consume(view)\n"
        ),
        "app/holder.py": (
            "from app.backing import Backing, check_view\n\n\nclass Holder:\n    def __init__(self):\n"
            "        self.store = Backing()\n\n    def check(self, view):\n        check_view(view)\n"
        ),
        "app/base.py": (
            "import threading\n\n\nclass Base:\n    def consume(self, view):\n"
            "        threading.Thread(target=print, args=(view,)).start()\n"
        ),
        "app/backing.py": (
            "import threading\n\nfrom app.base import Base\n\n\nclass Backing(Base):\n    pass\n\n\n"
            "def check_view(view):\n    threading.Thread(target=print, args=(view,)).start()\n"
        ),
        "app/spare.py": "import threading\n\n\ndef nothing():\n    return None\n",  # imported by the reader
    })
    run(tmp_path)
    (tmp_path / "app" / "spare.py").write_text(
        "import threading\n\n\ndef nothing():\n    return None\n\n\nclass Spare:\n"
        "    def __init__(self):\n        self.held = None\n\n    def consume(self, view):\n        self.held = view\n\n"
        "    def later(self):\n        threading.Thread(target=print, args=(self.held,)).start()\n"
    )
    code, out = assert_warm_is_cold(tmp_path, "--format", "json")
    assert any(f["path"] == "app/spare.py" for f in json.loads(out)["findings"])


NARROWED = {
    "pyproject.toml": "[tool.bufferlint]\n",
    "app/__init__.py": "",
    "app/loader.py": (
        "from runai_model_streamer import SafetensorsStreamer\n\nfrom app import helpers\nfrom app.near import Near\n\n\n"
        "def load(model, files):\n    with SafetensorsStreamer() as streamer:\n"
        "        streamer.stream_files(files)\n        model.load_weights(streamer.get_tensors())\n"
    ),
    "app/helpers.py": "def nothing():\n    return None\n",
    "app/near.py": (
        "class Near:\n    def load_weights(self, weights):\n        for name, w in weights:\n"
        "            print(name, w.sum())\n\n\ndef later():\n    return None\n"
    ),
    "app/far.py": (
        "class Far:\n    def __init__(self):\n        self.kept = []\n\n"
        "    def load_weights(self, weights):\n        for name, w in weights:\n            self.kept.append(w)\n"
    ),
}


@pytest.mark.parametrize("path, old, new", [
    ("app/helpers.py", "def nothing", "import app.far\n\n\ndef nothing"),  # a file the analysis did not parse
    ("app/near.py", "    return None", "    import app.far\n\n    return app.far"),  # parsed, outside interpreted functions
])
def test_an_import_added_anywhere_changes_what_a_call_by_name_reaches(tmp_path: Path, path: str, old: str, new: str) -> None:
    """``model.load_weights`` reaches the classes the loader's imports load: ``Near``, not
    ``Far``, until a module on the way imports ``app.far``; the cache must see that edit."""
    write(tmp_path, NARROWED)
    _, before = run(tmp_path, "--format", "json")
    assert not any(f["path"] == "app/far.py" for f in json.loads(before)["findings"])
    edited = tmp_path / path
    edited.write_text(edited.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    code, out = assert_warm_is_cold(tmp_path, "--format", "json")
    assert code == 1 and any(f["path"] == "app/far.py" for f in json.loads(out)["findings"])


SELECTED = {
    "pyproject.toml": "[tool.bufferlint]\n",
    "app/__init__.py": "",
    "app/readers.py": (
        "from runai_model_streamer import SafetensorsStreamer\n\n\nclass Streaming:\n    supports_key_filter = False\n\n"
        "    def iter_weights(self, files):\n        with SafetensorsStreamer() as streamer:\n"
        "            streamer.stream_files(files)\n            yield from streamer.get_tensors()\n\n\n"
        "class Mapped:\n    supports_key_filter = True\n\n    def iter_weights(self, files):\n"
        "        for name in files:\n            yield name, [name]\n\n\nFALLBACK = Mapped\n\n\n"
        "def select(needs_key_filter=False):\n    chosen = Streaming\n"
        "    if needs_key_filter and not chosen.supports_key_filter:\n        chosen = FALLBACK\n    return chosen()\n"
    ),
    "app/loader.py": (
        "from concurrent.futures import ThreadPoolExecutor\n\nfrom app.readers import select\n\n\n"
        "def wanted(name):\n    return True\n\n\n"
        "def weights(files, keep=None):\n    reader = select(needs_key_filter=keep is not None)\n"
        "    yield from reader.iter_weights(files)\n\n\n"
        "def filtered(files, params):\n    with ThreadPoolExecutor() as pool:\n"
        "        for name, tensor in weights(files, keep=wanted):\n            pool.submit(params[name].copy_, tensor)\n\n\n"
        "def unfiltered(files, params):\n    with ThreadPoolExecutor() as pool:\n"
        "        for name, tensor in weights(files):\n            pool.submit(params[name].copy_, tensor)\n"
    ),
}


@pytest.mark.parametrize("old, new", [
    ("supports_key_filter = False", "supports_key_filter = True"),  # a class attribute, outside functions
    ("FALLBACK = Mapped", "FALLBACK = Streaming"),  # an alias constant
])
def test_an_edit_to_what_selects_the_class_changes_the_findings(tmp_path: Path, old: str, new: str) -> None:
    """With a key filter the streaming reader is passed over (its class attribute says it
    cannot skip keys) for the fallback the alias names: only the unfiltered call lends.
    Editing either fact outside the interpreted functions changes that, and a warm run must
    see it (the questions ``class_constant`` and ``class_values`` are part of the record)."""
    write(tmp_path, SELECTED)
    _, before = run(tmp_path, "--format", "json")
    assert [f["line"] for f in json.loads(before)["findings"]] == [24]
    edited = tmp_path / "app" / "readers.py"
    edited.write_text(edited.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    code, out = assert_warm_is_cold(tmp_path, "--format", "json")
    assert code == 1 and [f["line"] for f in json.loads(out)["findings"]] == [18, 24]


def test_the_cache_key_holds_the_python_that_runs_the_analysis(loader: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``ast.parse`` accepts depends on the Python: another version or implementation
    never reuses this one's cache (the other Python is named, not run: one may not be here)."""
    from bufferlint.api import CheckOptions, open_project, project_cache

    project = open_project(CheckOptions(paths=[loader]))
    assert not isinstance(project, str)
    key = project_cache(project).key
    assert project_cache(project).key == key
    monkeypatch.setattr("sys.version", "3.12.1 (main) [GCC]")
    other_version = project_cache(project).key
    monkeypatch.setattr("sys.implementation.name", "pypy")
    assert len({key, other_version, project_cache(project).key}) == 3


def test_a_cache_document_edited_after_it_was_written_is_not_trusted(loader: Path) -> None:
    run(loader)
    document = loader / ".bufferlint_cache" / "run.json"
    content = json.loads(document.read_bytes())
    content["body"]["result"]["findings"] = []  # still JSON, still under the right key
    document.write_text(json.dumps(content, separators=(",", ":")))
    assert assert_warm_is_cold(loader)[0] == 1
    assert json.loads(document.read_bytes())["body"]["result"]["findings"]  # rewritten


def test_the_temporary_files_of_a_killed_write_are_removed_by_the_next_run(loader: Path) -> None:
    """A leftover (no process holds it) goes; a write in progress (its lock held, here by
    this test) stays."""
    import fcntl

    run(loader)
    cache = loader / ".bufferlint_cache"
    leftovers = [cache / ".run.json.x1y2z3.tmp", cache / "replay" / ".0123.json.abcdef.tmp"]
    for leftover in leftovers:
        leftover.write_bytes(b'{"format":')
    live = cache / ".files.json.live00.tmp"
    with live.open("wb") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        run(loader)
        assert live.exists()
    assert not any(leftover.exists() for leftover in leftovers)


CALLBACK_LOADER = """\
import concurrent.futures

from runai_model_streamer import SafetensorsStreamer


def for_each(files, fn):
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for key, view in streamer.get_tensors():
            fn(key, view)


def stream_into(files, weights):
    workers = concurrent.futures.ThreadPoolExecutor(4)
    for_each(files, lambda key, view: workers.submit(weights[key].copy_, view))
"""


@pytest.mark.parametrize("old, new", [
    ("def for_each", "# the helper every loader shares\ndef for_each"),  # lines move above both
    ("    workers = ", "    # one pool for the whole stream\n    workers = "),  # inside the lambda's function
    ("view: workers", "view:  workers"),  # inside the lambda itself
])
def test_a_callback_s_finding_survives_edits_around_it(tmp_path: Path, old: str, new: str) -> None:
    """The lambda is a function of the index named by its place among its function's
    lambdas, not by its line: a warm run after an edit around it prints what a cold one does."""
    write(tmp_path, {"pyproject.toml": "[tool.bufferlint]\n", "models/__init__.py": "",
                     "models/loading.py": CALLBACK_LOADER})
    code, out = run(tmp_path, "--format", "json")
    assert code == 1 and [f["line"] for f in json.loads(out)["findings"]] == [15]
    edit(tmp_path, old, new)
    code, out = assert_warm_is_cold(tmp_path, "--format", "json")
    assert code == 1 and len(json.loads(out)["findings"]) == 1
