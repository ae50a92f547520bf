"""One table (``packs.PACK_KEYS``) drives every pack key: the Vocabulary field it fills, how it
is read and merged, what ``--show-settings`` lists, how the matcher finds it, and the key
reference in docs/rule-packs.md. A key added to one of these and not the table fails here."""

from __future__ import annotations

import dataclasses
import re
import tomllib

import pytest

from bufferlint.analysis.frontend.vocabmatch import CallShape, VocabIndex
from bufferlint.packs import OWNED_IF_KEYS, PACK_KEYS, PackError, TaskCall, Vocabulary, vocabulary_from_dict
from bufferlint.show_settings import SECTIONS
from conftest import REPO

# Vocabulary fields that no pack key fills: bookkeeping of the loading itself.
BOOKKEEPING = {"packs", "titles", "not_lending", "not_checking", "origins"}

# One pack that uses every key: each listed key has one entry named after the key.
EVERY_KEY = {
    "pack": {"name": "every", "description": "every key once"},
    "markers": ["_every_marker"],
    "kinds": [{"name": "every", "markers": ["_every_kind_marker"], "copy": ".copy()", "doc": "d"}],
    "signatures": {"every.view": ["input"]},
    "view-parameters": {"every.view": "input"},
    "dtype-conversions": {"every.view": "every.dtype"},
    "retained-in": {"every.retainer": "into"},
    "sources": [{"call": "every.source", "kind": "every", "advances": ".every_advance"}],
    "guards": [{"call": "every.guard"}],
    "sinks": [{"call": "every.sink"}],
    "registrars": [{"call": "every.registrar", "params": ["fn"], "passes": ["borrowed"]}],
    "sanitizers": [{"call": "every.sanitizer"}],
    "views": ["every.view"],
    "view-attributes": ["every_attribute"],
    "strided-views": [".every_strided_view"],
    "contiguous-copies": [".every_contiguous_copy"],
    "settlers": ["every.settler"],
    "drains": ["every.drain"],
    "signals": ["every.signal"],
    "loop-yields": ["every.loop_yield"],
    "done-flags": [".every_done"],
    "passthrough": ["every.passthrough"],
    "groupers": ["every.grouper"],
    "collectors": ["every.collector"],
    "binds": ["every.bind"],
    "synchronizers": ["every.synchronizer"],
    "device-available": ["every.device_available"],
    "retainers": [".every_retainer"],
    "host-reads": [".every_host_read"],
    "metadata-reads": [".every_metadata_read"],
    "host-allocations": ["every.host_allocation"],
    "array-allocations": ["every.array_allocation"],
    "pinned-allocations": ["every.pinned_allocation"],
    "device-moves": ["every.device_move"],
    "host-writes": [{"call": "every.host_write", "writes": 0}],
    "event-records": ["every.event_record"],
    "recorded-events": ["every.recorded_event"],
    "new-events": ["every.new_event"],
    "current-streams": ["every.current_stream"],
    "stream-queries": ["every.stream_query"],
    "not-one-value": ["every.not_one"],
}


def test_every_vocabulary_field_is_one_keys() -> None:
    fields = [key.field for key in PACK_KEYS if key.field]
    assert len(fields) == len(set(fields)), "two keys fill one field"
    assert set(fields) == {f.name for f in dataclasses.fields(Vocabulary)} - BOOKKEEPING


def test_a_pack_with_every_key_reads_and_merges() -> None:
    assert set(EVERY_KEY) == {key.key for key in PACK_KEYS}, "EVERY_KEY must use every key"
    one = vocabulary_from_dict(EVERY_KEY, "every.toml")
    merged = Vocabulary()
    merged.merge(one)
    merged.merge(vocabulary_from_dict({k: v for k, v in EVERY_KEY.items() if k != "kinds"}, "again.toml"))
    for key in PACK_KEYS:
        if not key.field:
            continue
        value = getattr(merged, key.field)
        assert value, f"{key.key}: nothing read"
        if key.form in ("patterns", "tables") and key.key != "kinds":
            assert len(value) == 2, f"{key.key}: merging two packs keeps both entries"
    assert merged.markers == {"_every_marker", "_every_kind_marker"}
    assert merged.not_one_value == ["every.not_one"], "not-one-value merges without repeats"
    with pytest.raises(PackError, match="kind 'every' is already defined"):
        merged.merge(vocabulary_from_dict({"kinds": EVERY_KEY["kinds"]}, "third.toml"))


def test_show_settings_lists_the_keys_with_names_in_table_order() -> None:
    vocab = vocabulary_from_dict(EVERY_KEY, "every.toml")
    assert SECTIONS == tuple(key.key for key in PACK_KEYS if key.names is not None)
    listed = {section for section, _ in vocab.origins}
    assert listed == set(SECTIONS)
    assert vocab.origins[("sources", "every.source")] == "every.toml"
    assert vocab.origins[("host-reads", ".every_host_read")] == "every.toml"


@pytest.mark.parametrize("key", [key for key in PACK_KEYS if key.matched], ids=lambda key: key.key)
def test_the_matcher_finds_each_matched_key_by_name(key) -> None:
    index = VocabIndex(vocabulary_from_dict(EVERY_KEY, "every.toml"))
    entry = EVERY_KEY[key.key][0]
    pattern = entry["call"] if isinstance(entry, dict) else entry
    if pattern.startswith("."):
        call = CallShape(None, pattern[1:], frozenset(), lambda name, position=None: ("absent", None))
    else:
        call = CallShape(pattern, None, frozenset(), lambda name, position=None: ("absent", None))
    found = index.match(key.key, call)
    assert found is not None, f"{key.key}: {pattern} not matched"
    assert index.match("sinks" if key.key != "sinks" else "guards", call) is None


def test_unknown_sub_keys_name_the_allowed_ones() -> None:
    for key in PACK_KEYS:
        if key.form == "tables":
            with pytest.raises(PackError, match=re.escape(f"allowed: {', '.join(sorted(key.subkeys))}")):
                vocabulary_from_dict({key.key: [{"call": "a.b", "name": "x", "nonsense": 1}]}, "p.toml")


def _reference() -> dict:
    """The key reference: the ``docs-test: pack`` block under "## Keys" in docs/rule-packs.md."""
    text = (REPO / "docs" / "rule-packs.md").read_text(encoding="utf-8")
    section = text.split("\n## Keys\n", 1)[1]
    block = re.search(r"<!-- docs-test: pack -->\n```toml\n(.*?)\n```", section, re.S)
    assert block, "docs/rule-packs.md: no pack block under ## Keys"
    return tomllib.loads(block.group(1))


def test_the_docs_key_reference_shows_every_key_and_sub_key() -> None:
    reference = _reference()
    missing = [key.key for key in PACK_KEYS if key.key not in reference]
    for key in PACK_KEYS:
        tables = reference.get(key.key, [])
        tables = [tables] if isinstance(tables, dict) else [t for t in tables if isinstance(t, dict)]
        written = {sub for table in tables for sub in table}
        missing += [f"{key.key}.{sub}" for sub in key.subkeys if sub not in written]
    owned_if = {sub for source in reference.get("sources", []) for cond in source.get("owned-if", []) for sub in cond}
    missing += [f"sources.owned-if.{sub}" for sub in OWNED_IF_KEYS if sub not in owned_if]
    assert not missing, f"docs/rule-packs.md's key reference does not show: {', '.join(missing)}"


def test_a_sinks_task_template_names_its_parameters() -> None:
    def task(template: str, params: list[str]):
        pack = {"sinks": [{"call": "every.sink", "params": params, "task": template}]}
        return vocabulary_from_dict(pack, "task.toml").sinks[0].task

    assert task("fn(...)", ["fn"]) == TaskCall("fn")
    assert task("target(*args, **kwargs)", ["target", "args", "kwargs"]) == TaskCall("target", "args", "kwargs")
    assert task("target(**kwargs)", ["target", "kwargs"]) == TaskCall("target", "", "kwargs")
    for template, params in [("fn(...)", []), ("fn(*args)", ["fn"]), ("fn(x)", ["fn", "x"]), ("fn(", ["fn"])]:
        with pytest.raises(PackError, match="'task' must be"):
            task(template, params)


def test_a_sinks_handle_and_await_words() -> None:
    """``handle-covers = "none"`` needs no handle (nothing the call returns stands for the
    work); ``awaited`` is "done" unless a pack says "queued"."""
    def sink(**entry):
        return vocabulary_from_dict({"sinks": [{"call": "every.sink", **entry}]}, "s.toml").sinks[0]

    assert sink(**{"handle-covers": "none"}).handle_covers == "none"
    with pytest.raises(PackError, match="'handle-covers' needs the 'handle'"):
        sink(**{"handle-covers": "last-part"})
    assert sink().awaited == "done"
    assert sink(awaited="queued").awaited == "queued"
    with pytest.raises(PackError, match="'awaited' must be"):
        sink(awaited="later")


def test_a_registrar_s_callback_is_one_of_its_params() -> None:
    def registrar(**entry):
        return vocabulary_from_dict({"registrars": [{"call": "every.registrar", **entry}]}, "r.toml").registrars[0]

    assert registrar(params=["fn"]).callback == "fn"
    assert registrar(params=["key", "fn"], callback="fn").callback_position() == 1
    with pytest.raises(PackError, match="'callback' must name one of 'params'"):
        registrar(params=["fn"], callback="hook")
    with pytest.raises(PackError, match="'passes' must list"):
        registrar(params=["fn"], passes=["lent"])


def test_a_length_condition_reads_back_and_matches_displays_only() -> None:
    """``len(kw@N)=n``: the call writes a display of ``n`` elements there; a call whose
    argument is not a display (its count unknown) does not match."""
    from bufferlint.packs import CallPattern

    pattern = CallPattern.parse("concurrent.futures.wait(len(fs@0)=1, timeout@1?=None)")
    assert str(pattern) == "concurrent.futures.wait(len(fs@0)=1, timeout@1?=None)"
    vocab = vocabulary_from_dict({"settlers": [str(pattern)]}, "test")
    index = VocabIndex(vocab)

    def shape(length):
        return CallShape("concurrent.futures.wait", None, frozenset(), lambda name, position: ("absent", None),
                         lambda name, position: length if position == 0 else None)

    assert index.match("settlers", shape(1)) is not None
    assert index.match("settlers", shape(2)) is None
    assert index.match("settlers", shape(None)) is None
    with pytest.raises(ValueError):
        CallPattern.parse("concurrent.futures.wait(len(fs@0)=one)")
