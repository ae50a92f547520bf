"""The analysis with a persistent cache: a warm run reuses what the files it depends on did
not change, and gives exactly what a cold run would.

Two documents per cache key (``bufferlint.cache``):

* ``files``: per file *content* (a hash of its bytes), once checked, whether CPython
  compiles it (the message when not). Checking a report file costs a parse
  and a compile; with the cache only new or edited files are checked again.
* ``run``: the last whole-project analysis: every file's content hash (and ``os.stat``, so
  that a later run hashes only the files whose stat changed: ``_unchanged``), the files it parsed,
  the names whose mention makes a file matter (sources, markers, guards, producers found on
  the way, and the word groups of sources that need their arguments, device-to-host copies) and the
  method names it asked definitions of in any round (an outcome's demands are only its last
  round's: a name dispatched in round 2 and typed in round 3 was still asked), and its findings and errors for
  every file (so that a later run reporting other files, as pre-commit does, can reuse it).

Why a run can be reused when some files changed: the analysis reads a file it did not parse
through four facts only: its path, whether its text mentions one of those names (or word
groups), which functions it defines (for the method names asked for), and what it imports
(when a call by method name read the import graph, ``analysis.frontend.imports``: the
record keeps each file's, and a changed file's must be the same); the tests are
the ones the analysis itself runs (``analysis.textscan``, ``scan_imports``). So when every changed file was not
parsed and still mentions none of the names and defines none of the asked methods, the
analysis would select the same files and compute the same thing: its findings and errors are
reused, and only the changed files' own checks run.

A parsed file edited since the analysis is compared with the version the analysis read (its
text is kept in the cache, and the record keeps those versions' hashes, ``base``: the record
always describes the analysis as it ran, and each run maps it onto the files as they are):
when its interface (``analysis.interface``: everything the analysis reads of it outside the
functions it interpreted, and those functions' whole syntax trees) is the same, the analysis
would compute the same thing with those functions at their new lines, so the recorded
findings are reused with their lines in that file moved. That is the usual pre-commit case:
an edit to ``forward`` of a model whose ``load_weights`` was analysed. When only the bodies of
interpreted functions changed, each is interpreted again against the recorded log of its
analyses (``analysis.edits``, ``analysis.replay``: the logs are written per parsed file, as
JSON, by the run that analysed); if it does exactly what it did, the findings are reused
the same way. Anything else (a file added or removed, other settings, a replay that differs)
runs the whole analysis again and records it.
"""

from __future__ import annotations

import ast
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Collection

from bufferlint.analysis.domain.limits import told_with
from bufferlint.analysis.frontend.imports import scan_imports
from bufferlint.analysis.frontend.index import ModuleInfo, ProjectIndex, module_name
from bufferlint.analysis.incremental.interface import LineShift, file_interface, line_shift
from bufferlint.analysis.frontend.syntax_check import SyntaxCheck
from bufferlint.analysis.frontend.textscan import defined_names, mentions_group, word_pattern
from bufferlint.cache import Cache, content_hash
from bufferlint.discovery import path_order
from bufferlint.findings import COVERS, AnalysisResult, FileError, Finding, Span, TraceStep
from bufferlint.gcpause import paused_gc
from bufferlint.catalog import rule_for
from bufferlint.hazards import Hazard
from bufferlint.internal import debugging
from bufferlint.lifetime import keep_until_exit
from bufferlint.packs import Vocabulary
from bufferlint.source import overlays_active, read_bytes, read_source

if TYPE_CHECKING:
    from bufferlint.analysis.incremental.edits import EditContext, LineMap
    from bufferlint.analysis.whole.program import ProjectAnalysis


@dataclass
class Scan:
    """The project's files as found at the start of a run: every readable file's content hash,
    and the bytes of those read (a file unchanged since the last run, by its ``os.stat``, is
    not read again: ``_unchanged``)."""

    root: Path
    raw: dict[Path, bytes]  # the files read this run
    hashes: dict[Path, str]  # every readable file
    unreadable: dict[Path, FileError]
    stats: dict[Path, list[int]]  # size, mtime, ctime, inode, and when its bytes were last read (ns)

    def key(self, path: Path) -> str:
        # A string prefix test (paths are absolute and normalised): Path.relative_to, called
        # for every file several times a run, was a third of a warm run's time.
        prefix = os.path.join(str(self.root), "")
        text = str(path)
        return text[len(prefix):].replace(os.sep, "/") if text.startswith(prefix) else text


def analyze_cached(root: Path, files: Collection[Path], report_files: Collection[Path], vocab: Vocabulary,
                   cache: Cache, progress: Callable[[int, int], None] | None = None) -> AnalysisResult:
    """``analysis.analyze_project``'s result (before rendering), through ``cache``."""
    with paused_gc():  # the analysis's state is held while its record is written: see bufferlint.gcpause
        return _analyze_cached(root, files, report_files, vocab, cache, progress)


def _analyze_cached(root: Path, files: Collection[Path], report_files: Collection[Path], vocab: Vocabulary,
                    cache: Cache, progress: Callable[[int, int], None] | None) -> AnalysisResult:
    paths = sorted(set(files) | set(report_files), key=path_order)
    cache.remove_leftovers()
    record = cache.load("run")
    facts = _facts(cache.load("files") or {})
    scan = _read(root, paths, record, facts)
    report = set(report_files)
    stored, moved = _reusable(record, scan, cache, vocab)
    if moved:
        # The replays' state (module indexes, decoded logs, interpreter states: cycles) is
        # garbage now; the collector resuming at the end would walk all of it (0.8 s after
        # a cut-off on sglang 0.5.16). The command need not: see bufferlint.lifetime.
        keep_until_exit(moved)
    reused = stored is not None
    if stored is not None:
        parsed = stored.files_parsed  # the record stays the analysis's own (``base``: what it read)
    else:
        from bufferlint.analysis.whole.program import ProjectAnalysis, run_analysis  # the engine, only when it runs

        scan = _read(root, paths, None, facts)  # the analysis reads every file: all of them, now
        to_check = [p for p in sorted(report) if p in scan.raw and "error" not in facts.get(scan.hashes[p], {})]
        readable = sorted(scan.raw)
        analysis = ProjectAnalysis(root, readable, readable, vocab, progress, raw=scan.raw, check_files=to_check,
                                   record=True)
        full = run_analysis(analysis)
        checked = {error.path: error.message for error in analysis.check_errors}
        for path in to_check:
            facts.setdefault(scan.hashes[path], {})["error"] = checked.get(path)
        conditional = {text for text, *_ in full.conditional_notices}
        about_files = {text for text, _ in full.file_notices}
        stored = AnalysisResult(findings=full.findings, errors=analysis.own_errors,
                                notices=[n for n in full.notices if n not in conditional and n not in about_files],
                                conditional_notices=full.conditional_notices, file_notices=full.file_notices,
                                covered=full.covered)
        parsed = full.files_parsed
        record = {
            "files_parsed": parsed,
            "parsed": sorted(scan.key(p) for p in analysis.parsed),
            "names": sorted(analysis.trigger_names),
            "groups": [list(group) for group in analysis.seed_groups],
            "methods": sorted(name for name in analysis.asked_methods if name),
            "result": _encode_result(stored, scan),
            "analysed": _analysed_ranges(analysis, scan),
            "callee_words": sorted(analysis.program.callee_words),
            "base": {scan.key(p): scan.hashes[p] for p in analysis.parsed if p in scan.hashes},
            "modules": sorted(analysis.program.module_names),  # every module, parsed or not (``replay.outside_answer``)
        }
        if analysis.program.read_imports:  # what each file imports, when a call by name asked (``_same_imports``)
            record["imports"] = _imports_read(analysis, scan)
        # The logs written with this record, by their bodies' digests (a concurrent run writes its own).
        record["logs"] = cache.save_documents("replay", _logs_by_file(analysis, scan, record))
    # Report files never checked (a full check after pre-commit runs: thousands of them) are
    # checked as a cold run checks them, in worker processes.
    unchecked = [p for p in sorted(report) if p in scan.hashes and "error" not in facts.get(scan.hashes[p], {})]
    found = {error.path: error.message for error in SyntaxCheck(unchecked).errors()}
    for path in unchecked:
        facts.setdefault(scan.hashes[path], {})["error"] = found.get(path)
    for digest in scan.hashes.values():
        facts.setdefault(digest, {})  # every file has its entry: ``_read`` trusts a known one
    record["reused"] = reused  # how this run got its result (for tests and -v)
    record["moved"] = sorted(k for k, shift in moved.items() if isinstance(shift, LineShift))  # analysed functions only moved
    record["replayed"] = sorted(k for k, shift in moved.items() if not isinstance(shift, LineShift))  # edited inside, replayed
    record["manifest"] = {scan.key(p): h for p, h in scan.hashes.items()}
    record["stats"] = {scan.key(p): stat for p, stat in scan.stats.items()}
    record["unreadable"] = sorted(scan.key(p) for p in scan.unreadable)
    cache.save("run", record)
    cache.save("files", {h: facts[h] for h in scan.hashes.values()})
    cache.save_texts({digest: scan.raw.get(scan.root / key) if scan.hashes.get(scan.root / key) == digest else None
                      for key, digest in record["base"].items()})
    result = _result_for(report, scan, stored, facts, parsed, cache.problems)
    if not reused:
        result.cache = "analysed, saved"
    elif record["replayed"]:
        result.cache = f"the last analysis reused, edits inside analysed functions replayed in {', '.join(record['replayed'])}"
    elif moved:
        result.cache = f"the last analysis reused, with the lines moved in {', '.join(sorted(moved))}"
    else:
        result.cache = "the last analysis reused"
    return result


def _logs_by_file(analysis: ProjectAnalysis, scan: Scan, record: dict) -> dict[str, dict]:
    """The analyses' logs (``analysis.replay``) as one document per parsed file, named by
    its content hash; what following an edit's effects needs besides them goes in
    ``record`` (``_cutoff_facts``)."""
    from bufferlint.analysis.incremental.replay import encode_logs, observed_attributes, seal  # the engine's

    program = analysis.program
    observed = observed_attributes(program.logs or {}, program.index.classes.values())
    record.update(_cutoff_facts(analysis, scan, observed))
    seal(program.logs or {}, program.outcomes, observed)
    grouped: dict[Path, dict] = {}
    for qualname, logs in (program.logs or {}).items():
        info = program.index.functions.get(qualname)
        if info is not None:
            grouped.setdefault(info.module.path, {})[qualname] = logs
    documents = {}
    for path, logs in grouped.items():
        document = encode_logs(logs)
        if document is not None and path in scan.hashes:
            documents[scan.hashes[path]] = document
    return documents


def _cutoff_facts(analysis: ProjectAnalysis, scan: Scan, observed: frozenset[str]) -> dict:
    """What ``analysis.cutoff`` reads of the run besides the logs: the attributes whose
    stores are seen, who read each function's summary, who calls it, which functions hold
    each finding's site, the functions whose every call is synchronised, the attribute
    names whose stored callables were asked for, the attribute names whose declared classes
    or objects were asked for, and the signatures of the functions calls
    by name were given (``replay.OutlinedFunction``: a replay need not parse their modules)."""
    from bufferlint.analysis.incremental.replay import outline_of  # the engine's
    program = analysis.program
    readers: dict[str, set[str]] = {}
    attached: set[str] = set()
    fields_asked: set[str] = set()
    logged = program.logs or {}
    by_name: set[str] = set()  # the functions a call by name or an override lookup was given
    for qualname, logs in logged.items():
        for log in logs:
            for (_, question), answer in log.reads.items():
                if question[0] == "summary" and question[1] in logged:
                    readers.setdefault(question[1], set()).add(qualname)
                elif question[0] == "attached":
                    attached.add(question[1])
                elif question[0] in ("field_types", "field_objects"):
                    fields_asked.add(question[2])
                elif question[0] == "methods_named":
                    by_name.update(found for found, _ in answer)
                elif question[0] == "overrides_of":
                    by_name.update(answer)
    incoming: dict[str, set[str]] = {}
    origins: dict[tuple, set[str]] = {}
    for qualname, outcome in program.outcomes.items():
        for edge in outcome.edges:
            incoming.setdefault(edge.callee, set()).add(qualname)
        sites = [(hazard, site.span) for hazard, site in outcome.findings]
        sites += [(reach.hazard, reach.site.span) for reach in outcome.sited]
        for hazard, span in sites:
            key = (hazard.name, scan.key(span.path), span.line, span.column, span.end_line, span.end_column)
            origins.setdefault(key, set()).add(qualname)
    outlines: dict[str, dict[str, list]] = {}
    for qualname in sorted(by_name):
        info = program.index.functions.get(qualname)
        outline = outline_of(info) if info is not None else None
        if info is not None and outline is not None:
            outlines.setdefault(info.module.name, {})[qualname] = outline
    return {
        "observed": sorted(observed),
        "readers": {q: sorted(names) for q, names in sorted(readers.items())},
        "outlines": outlines,
        "incoming": {q: sorted(names) for q, names in sorted(incoming.items())},
        "origins": [[list(key), sorted(names)] for key, names in sorted(origins.items())],
        "covered": sorted(analysis.covered_by_callers()),
        "attached": sorted(attached),
        "fields_asked": sorted(fields_asked),
    }


def _analysed_ranges(analysis: ProjectAnalysis, scan: Scan) -> dict[str, dict[str, list[int]]]:
    """Per parsed file, the functions the analysis interpreted and their lines."""
    out: dict[str, dict[str, list[int]]] = {}
    functions = analysis.program.index.functions
    for qualname in analysis.program.analyses:
        info = functions.get(qualname)
        if info is None:
            continue
        node = info.node
        first = getattr(node, "lineno", 1)
        out.setdefault(scan.key(info.module.path), {})[qualname] = [first, getattr(node, "end_lineno", None) or first]
    return out


def _facts(body: dict) -> dict:
    """The per-content facts that are well formed (a damaged entry is checked again)."""
    facts = {}
    for digest, entry in body.items():
        if isinstance(entry, dict):
            kept = {}
            if "error" in entry and (entry["error"] is None or isinstance(entry["error"], str)):
                kept["error"] = entry["error"]
            facts[digest] = kept
    return facts


def _read(root: Path, files: list[Path], record: dict | None, facts: dict) -> Scan:
    """Hash every file, reading only those ``record`` (the last run's) cannot vouch for, or
    whose per-content facts (``facts``) are not at hand."""
    scan = Scan(root, {}, {}, {}, {})
    overlaid = overlays_active()  # an editor's unsaved text is not what the stat describes
    known = _unchanged(None if overlaid else record, scan)
    for path in files:
        stat = _stat(path)
        vouched = known(path, stat)
        if vouched is not None and vouched[0] in facts:
            scan.hashes[path], scan.stats[path] = vouched[0], stat + [vouched[1]]  # type: ignore[operator]
            continue
        data = read_bytes(path)
        if isinstance(data, FileError):
            scan.unreadable[path] = data
            continue
        scan.raw[path], scan.hashes[path] = data, content_hash(data)
        if stat is not None and not overlaid:
            scan.stats[path] = stat[:4] + [time.time_ns()]
    return scan


RACY_NS = 2_000_000_000  # timestamps coarser than this (FAT: 2 s) would need more


def _unchanged(record: dict | None, scan: Scan) -> Callable[[Path, list[int] | None], tuple[str, int] | None]:
    """The test of a file against the last run: its recorded hash (and when it was read)
    when its size, modification and change times and inode are the ones recorded when its
    bytes were hashed, and that change time is well before that read. Any write or rename
    changes the change time (and ``os.utime`` cannot set it back), so a file edited since it
    was read shows another stat, unless the edit fell in the same timestamp tick as the read:
    git's "racy clean" problem, solved git's way, by trusting only files changed ``RACY_NS``
    or more before the read."""
    try:
        manifest, stats = record["manifest"], record["stats"]  # type: ignore[index]
        if not isinstance(manifest, dict) or not isinstance(stats, dict):
            raise TypeError
    except (KeyError, TypeError):
        return lambda path, stat: None

    def known(path: Path, stat: list[int] | None) -> tuple[str, int] | None:
        key = scan.key(path)
        old, digest = stats.get(key), manifest.get(key)
        if stat is None or not isinstance(old, list) or len(old) != 5 or not isinstance(digest, str):
            return None
        if old[:4] != stat or not isinstance(old[4], int) or old[2] >= old[4] - RACY_NS:
            return None
        return digest, old[4]

    return known


def _stat(path: Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _reusable(record: dict | None, scan: Scan, cache: Cache, vocab: Vocabulary) -> tuple[AnalysisResult | None, dict]:
    """The recorded analysis, if it holds for these files (and is well formed), with the
    new lines of the analysed functions of edited files whose interface did not change."""
    try:
        edited = _still_valid(record, scan) if record is not None else None
        if edited is None:
            return None, {}
        shifts = {}
        for key in edited:
            shift = _shift(record, scan, key, cache, vocab)
            if shift is None:
                return None, {}
            shifts[scan.root / key] = shift
        result = _decode_result(record["result"], scan.root)
        result.files_parsed = int(record["files_parsed"])
        if shifts and not _move(result, shifts, scan.root):
            return None, {}
        return result, {scan.key(path): shift for path, shift in shifts.items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return None, {}  # a damaged record: analyse again


def _shift(record: dict, scan: Scan, key: str, cache: Cache, vocab: Vocabulary) -> LineShift | LineMap | None:
    """How the lines of the edited parsed file ``key`` map from the version the recorded
    analysis read, if that analysis holds for it: the same interface (its analysed functions
    only moved), or edits inside analysed functions that replay exactly (``analysis.edits``).
    None: analyse again (or the old text is gone)."""
    path = scan.root / key
    base = record["base"][key]
    old_data, new_data = cache.load_text(base), _bytes(scan, path)
    if old_data is None or new_data is None:
        return None
    analysed = set(record["analysed"].get(key, {}))
    words = set(record["names"]) | set(record["callee_words"])
    groups = [tuple(group) for group in record["groups"]]
    old_text, new_text = _text(old_data), _text(new_data)
    old = file_interface(old_text, path, scan.root, analysed, words, groups)
    new = file_interface(new_text, path, scan.root, analysed, words, groups)
    if old is None or new is None:
        return None
    shift = line_shift(scan.root, old, new)
    if shift is not None:
        return shift
    from bufferlint.analysis.incremental.edits import check_edit  # the engine, only when a replay runs
    from bufferlint.analysis.incremental.replay import decode_logs
    from bufferlint.analysis.frontend.vocabmatch import VocabIndex

    def logs_of(qualnames: set[str]):
        digest = record["logs"].get(base)
        document = cache.load_document("replay", base, digest) if isinstance(digest, str) else None
        if document is None:
            return None  # gone, or written by another run (whose analysis this record is not)
        return decode_logs(document, qualnames)

    try:
        def module_names() -> frozenset:  # as the analysis knew them (the files are the same)
            return frozenset(record["modules"])

        modules = _AnalysedModules(record, scan, cache)
        return check_edit(path, scan.root, old_text, new_text, old, new, logs_of, modules, modules.outline,
                          module_names, VocabIndex(vocab), vocab, _edit_context(record, scan, cache))
    except Exception:  # a damaged log, or an engine bug: it costs the reuse (analyse again), never the run
        if debugging():
            raise
        return None


def _edit_context(record: dict, scan: Scan, cache: Cache) -> EditContext:
    """The recorded run as ``analysis.cutoff`` reads it: its facts, and any analysed
    function's module and logs (each file's document decoded once)."""
    from bufferlint.analysis.incremental.cutoff import RunFacts
    from bufferlint.analysis.incremental.edits import EditContext
    from bufferlint.analysis.incremental.replay import decode_logs

    files = {q: key for key, ranges in record["analysed"].items() for q in ranges}
    documents: dict[str, dict | None] = {}
    decoded: dict[str, list | None] = {}  # a cut-off asks a function's logs many times

    def module_of(qualname: str) -> str | None:
        key = files.get(qualname)
        return None if key is None else module_name(scan.root / key, scan.root)[0]

    def logs_for(qualname: str):
        if qualname not in decoded:
            decoded[qualname] = _decoded_logs(qualname)
        return decoded[qualname]

    def _decoded_logs(qualname: str):
        key = files.get(qualname)
        if key is None:
            return None
        if key not in documents:
            base = record["base"][key]
            digest = record["logs"].get(base)
            documents[key] = cache.load_document("replay", base, digest) if isinstance(digest, str) else None
        document = documents[key]
        if document is None or qualname not in document["logs"]:
            return None
        return decode_logs(document, {qualname})[qualname]

    facts = RunFacts(
        observed=frozenset(record["observed"]),
        readers=record["readers"],
        incoming=record["incoming"],
        origins={tuple(key): names for key, names in record["origins"]},
        covered=frozenset(record["covered"]),
        attached_asked=frozenset(record["attached"]),
        fields_asked=frozenset(record["fields_asked"]),
        reported=frozenset(scan.hashes),
    )
    return EditContext(facts, logs_for, module_of, scan.key)


class _AnalysedModules:
    """The modules as the recorded analysis read them: a module's index (None: it changed
    since, or is gone), each parsed once whichever replay asks (``cutoff`` replays in three
    versions of the edited file, and the others' modules are the same in all three); and the
    recorded signature of a function a call by name was given (``outline``), which spares a
    replay parsing its module unless it needs more of it."""

    def __init__(self, record: dict, scan: Scan, cache: Cache) -> None:
        self._record, self._scan, self._cache = record, scan, cache
        self._paths: dict[str, Path] = {}
        self._loaded: dict[str, ProjectIndex | None] = {}

    def __call__(self, name: str) -> ProjectIndex | None:
        if name not in self._loaded:
            self._loaded[name] = self._read(name)
        return self._loaded[name]

    def outline(self, module: str, qualname: str) -> list | None:
        """``replay.outline_of`` for ``qualname`` as recorded, if its module is unchanged."""
        outline = self._record["outlines"].get(module, {}).get(qualname)
        return outline if outline is not None and self._unchanged(module) is not None else None

    def _unchanged(self, name: str) -> Path | None:
        """The module's file, if it is the version the analysis read."""
        if not self._paths:
            self._paths.update({module_name(self._scan.root / key, self._scan.root)[0]: self._scan.root / key
                                for key in self._record["base"]})
        path = self._paths.get(name)
        if path is None or self._scan.hashes.get(path) != self._record["base"][self._scan.key(path)]:
            return None
        return path

    def _read(self, name: str) -> ProjectIndex | None:
        path = self._unchanged(name)
        data = self._cache.load_text(self._record["base"][self._scan.key(path)]) if path is not None else None
        if path is None or data is None:
            return None
        text = _text(data)
        index = ProjectIndex()
        index.add_module(ModuleInfo(name, path, ast.parse(text), text, module_name(path, self._scan.root)[1]))
        return index


def _bytes(scan: Scan, path: Path) -> bytes | None:
    """The file's bytes as hashed this run (read again if the stat vouched for it, once:
    kept with the files read)."""
    data = scan.raw.get(path)
    if data is None:
        read = read_bytes(path)
        data = read if isinstance(read, bytes) and content_hash(read) == scan.hashes.get(path) else None
        if data is not None:
            scan.raw[path] = data
    return data


def _text(data: bytes) -> str:
    """A parsed file's text as the analysis decoded it (``source.read_source``)."""
    source = read_source(Path("<cached>"), data)
    if isinstance(source, FileError):
        raise ValueError(source.message)
    return source.text


def _move(result: AnalysisResult, shifts: dict[Path, LineShift | LineMap], root: Path) -> bool:
    """Move the findings' lines in the edited files (and the covered ones', with their
    guards' spans); False when one cannot be placed, or an error or notice of the analysis
    concerns an edited file (it may name a line), or an edit (a cut-off's ``delta``) changed
    findings of a rule that covers or is covered (which finding stands for which is decided
    over the whole run's findings: analysed again)."""
    if any(error.path in shifts for error in result.errors):
        return False
    modules = {module_name(path, root)[0] + ":" for path in shifts}
    notices = result.notices + [text for text, *_ in result.conditional_notices] + [text for text, _ in result.file_notices]
    if any(module in notice for notice in notices for module in modules):
        return False
    deltas = [delta for delta in (getattr(each, "delta", None) for each in shifts.values()) if delta is not None]
    removed = {(rule_for(Hazard[hazard]).code, root / path, line, column, end_line, end_column)
               for delta in deltas for hazard, path, line, column, end_line, end_column in delta.removed}
    if deltas and not _cover_unchanged(result, deltas, removed):
        return False
    moved = []
    for finding in result.findings:
        span = finding.span
        if (finding.rule, span.path, span.line, span.column, span.end_line, span.end_column) in removed:
            continue
        placed = _moved_finding(finding, shifts)
        if placed is None:
            return False
        moved.append(placed)
    covered = []
    for finding, spans in result.covered:
        placed, guards = _moved_finding(finding, shifts), [_moved_span(span, shifts) for span in spans]
        if placed is None or any(guard is None for guard in guards):
            return False
        covered.append((placed, tuple(guards)))
    for delta in deltas:
        moved += delta.added
    result.findings = sorted(moved, key=Finding.sort_key)
    result.covered = covered
    return True


def _cover_unchanged(result: AnalysisResult, deltas: list, removed: set) -> bool:
    """Whether a cut-off's findings leave which finding stands for which as the record has
    it (``ProjectAnalysis.cover_decided`` decides over the whole run's findings): no covered
    finding's site and no covering guard's site was computed again, and no finding was
    added of the rule a guard can stand for."""
    def key(finding: Finding) -> tuple:
        span = finding.span
        return (finding.rule, span.path, span.line, span.column, span.end_line, span.end_column)

    guards = {span for _, spans in result.covered for span in spans}
    standing = [finding for finding, _ in result.covered] + [f for f in result.findings if f.span in guards]
    coverable = rule_for(Hazard.ASYNC_READ_AFTER_ADVANCE).code
    return (not any(key(finding) in removed for finding in standing)
            and not any(finding.rule == coverable for delta in deltas for finding in delta.added))


def _moved_span(span: Span, shifts: dict[Path, LineShift | LineMap]) -> Span | None:
    """``span`` at its lines in the edited file (None: a line that is gone)."""
    shift = shifts.get(span.path)
    if shift is None:
        return span
    line, end_line = shift.line(span.line), shift.line(span.end_line)
    if line is None or end_line is None:
        return None
    return Span(span.path, line, span.column, end_line, span.end_column)


def _moved_finding(finding: Finding, shifts: dict[Path, LineShift | LineMap]) -> Finding | None:
    """``finding`` with its span and trace at their lines in the edited files (None: one
    cannot be placed)."""
    span = _moved_span(finding.span, shifts)
    if span is None:
        return None
    trace = []
    for step in finding.trace:
        shift = shifts.get(step.path)
        if shift is not None:
            line = shift.line(step.line)
            if line is None:
                return None
            step = TraceStep(step.path, line, step.note, step.fact)
        trace.append(step)
    return replace(finding, span=span, trace=tuple(trace))


def _still_valid(record: dict, scan: Scan) -> list[str] | None:
    """Would the analysis of these files select and compute what ``record`` holds? None if
    not; else the edited files it parsed (their interface decides, ``_shift``)."""
    manifest = record.get("manifest")
    if not isinstance(manifest, dict) or set(manifest) != {scan.key(p) for p in scan.hashes}:
        return None
    if set(record.get("unreadable", ())) != {scan.key(p) for p in scan.unreadable}:
        return None
    parsed = set(record.get("parsed", ()))
    base = record["base"]
    methods = set(record.get("methods", ()))
    pattern = word_pattern(set(record.get("names", ())), binary=True)
    groups = [tuple(group) for group in record.get("groups", ())]
    imports = record.get("imports")
    edited = []
    for path, digest in scan.hashes.items():
        key = scan.key(path)
        if key in parsed:
            if base[key] != digest:  # edited since the analysis (not only since the last run)
                if not _same_imports(imports, scan, path, _bytes(scan, path)):
                    return None
                edited.append(key)
            continue
        if manifest[key] == digest:
            continue
        data = scan.raw[path]  # a changed hash: the file was read
        if (pattern is not None and pattern.search(data)) or mentions_group(data, groups) or methods.intersection(defined_names(data)):
            return None
        if not _same_imports(imports, scan, path, data):
            return None
    return edited


def _same_imports(imports: dict | None, scan: Scan, path: Path, data: bytes | None) -> bool:
    """Does the changed file import what the analysed version did? Only asked when the
    analysis read the import graph (``imports``: each file's, as the analysis read it): a
    new import can change the methods a call by name reaches."""
    if imports is None:
        return True
    return data is not None and imports.get(scan.key(path)) == _imports_digest(scan, path, data)


def _imports_read(analysis: ProjectAnalysis, scan: Scan) -> dict[str, str]:
    """Each file's imports' digest: the analysis's own scan of a file's module when it
    scanned these very bytes (not scanned twice), else scanned here (a file whose module
    name another file took)."""
    program = analysis.program
    scanned = program.import_graph.scanned
    out = {}
    for path, data in scan.raw.items():
        name = module_name(path, scan.root)[0]
        text = program.module_texts.get(name)
        found = scanned.get(name) if text is not None and text[0] is data else None
        out[scan.key(path)] = found.digest() if found is not None else _imports_digest(scan, path, data)
    return out


def _imports_digest(scan: Scan, path: Path, data: bytes) -> str:
    name, is_package = module_name(path, scan.root)
    return scan_imports(data, name, is_package).digest()


def _result_for(report: set[Path], scan: Scan, stored: AnalysisResult, facts: dict, parsed: int,
                problems: list[str]) -> AnalysisResult:
    """The result a cold run reporting ``report`` gives: the same findings, and errors in the
    same order (unreadable, then the analysis's own, then the syntax check's)."""
    errors = [error for path, error in scan.unreadable.items() if path in report]
    errors += [error for error in stored.errors if error.path in report]
    known = {error.path for error in errors}
    for path in sorted(report):
        if path in scan.hashes and path not in known:
            message = facts.get(scan.hashes[path], {}).get("error")
            if message is not None:
                errors.append(FileError(path, message))
    errors.sort(key=lambda error: str(error.path))
    # A guard's finding names the consumers it stands for that a run reporting them covered.
    findings = [_covering_reported(f, report) for f in stored.findings if f.path in report]
    return AnalysisResult(
        findings=findings,
        covered=[(f, spans) for f, spans in stored.covered if f.path in report],
        errors=errors,
        notices=sorted(set(stored.notices) | set(problems) | told_with(stored.conditional_notices, findings)
                       | {text for text, path in stored.file_notices if path in report}),
        files_seen=len(scan.hashes),
        files_parsed=parsed,
    )


def _covering_reported(finding: Finding, report: set[Path]) -> Finding:
    """``finding`` as a run reporting ``report`` gives it: a guard's trace holds a step for
    each consumer it stands for (``findings.COVERS``) only where that consumer's file is
    reported (a cold run covers only the findings it reports)."""
    trace = tuple(step for step in finding.trace if step.fact[:1] != (COVERS,) or step.path in report)
    return finding if len(trace) == len(finding.trace) else replace(finding, trace=trace)


# -- JSON form of findings and errors ---------------------------------------------------------

def _encode_result(result: AnalysisResult, scan: Scan) -> dict:
    return {
        "findings": [_encode_finding(f, scan) for f in result.findings],
        "errors": [[scan.key(e.path), e.message] for e in result.errors],
        "notices": list(result.notices),
        "conditional": [[text, scan.key(path), first, last] for text, path, first, last in result.conditional_notices],
        "about_files": [[text, scan.key(path)] for text, path in result.file_notices],
        "covered": [[_encode_finding(f, scan), [_encode_span(span, scan) for span in spans]] for f, spans in result.covered],
    }


def _decode_result(body: dict, root: Path) -> AnalysisResult:
    return AnalysisResult(
        findings=[_decode_finding(f, root) for f in body["findings"]],
        errors=[FileError(root / path, message) for path, message in body["errors"]],
        notices=list(body["notices"]),
        conditional_notices=[(text, root / path, first, last) for text, path, first, last in body["conditional"]],
        file_notices=[(text, root / path) for text, path in body["about_files"]],
        covered=[(_decode_finding(f, root), tuple(_decode_span(span, root) for span in spans)) for f, spans in body["covered"]],
    )


def _encode_finding(finding: Finding, scan: Scan) -> dict:
    return {
        "rule": finding.rule, "span": _encode_span(finding.span, scan),
        "message": finding.message, "function": finding.function, "subject": finding.subject,
        "fix_error": finding.fix_error, "sink": finding.sink, "kind": finding.kind,
        "other_paths": finding.other_paths,
        "trace": [[scan.key(s.path), s.line, s.note, _encode_fact(s.fact)] for s in finding.trace],
    }


def _encode_span(span: Span, scan: Scan) -> list:
    return [scan.key(span.path), span.line, span.column, span.end_line, span.end_column]


def _decode_span(data: list, root: Path) -> Span:
    path, line, column, end_line, end_column = data
    return Span(root / path, line, column, end_line, end_column)


def _decode_finding(data: dict, root: Path) -> Finding:
    return Finding(
        data["rule"], _decode_span(data["span"], root), data["message"], data["function"],
        tuple(TraceStep(root / p, n, note, _decode_fact(fact)) for p, n, note, fact in data["trace"]),
        subject=data["subject"], fix_error=data["fix_error"], sink=data["sink"], kind=data["kind"],
        other_paths=data["other_paths"],
    )


def _encode_fact(value):
    """A trace step's fact as JSON: tuples as lists, a hazard by its name."""
    if isinstance(value, tuple):
        return [_encode_fact(v) for v in value]
    return {"hazard": value.name} if isinstance(value, Hazard) else value


def _decode_fact(value):
    """A fact written by ``_encode_fact``, back (a name that is no hazard: KeyError)."""
    if isinstance(value, dict):
        return Hazard[value["hazard"]]
    return tuple(_decode_fact(v) for v in value) if isinstance(value, list) else value
