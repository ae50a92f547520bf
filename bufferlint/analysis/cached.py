"""The analysis with a persistent cache: a warm run reuses what the files it depends on did
not change, and gives exactly what a cold run would.

Two documents per cache key (``bufferlint.cache``):

* ``files``: per file *content* (a hash of its bytes), its line count and, once checked,
  whether CPython compiles it (the message when not). Checking a report file costs a parse
  and a compile; with the cache only new or edited files are checked again.
* ``run``: the last whole-project analysis: every file's content hash, the files it parsed,
  the names whose mention makes a file matter (sources, markers, guards, producers found on
  the way, and the word groups of sources that need their arguments, BL005's copies) and the
  method names it asked definitions of, and its findings and errors for
  every file (so that a later run reporting other files, as pre-commit does, can reuse it).

Why a run can be reused when some files changed: the analysis reads a file it did not parse
through three facts only: its path, whether its text mentions one of those names (or word
groups), and which functions it defines (for the method names asked for); the tests are
the ones the analysis itself runs (``program.mentions_group``, the word pattern). So when every changed file was not
parsed and still mentions none of the names and defines none of the asked methods, the
analysis would select the same files and compute the same thing: its findings and errors are
reused, and only the changed files' own checks run. Anything else (a parsed file edited, a
file added or removed, other settings) runs the whole analysis again and records it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection

from bufferlint.analysis.program import ProjectAnalysis, word_pattern, defined_names, mentions_group, run_analysis
from bufferlint.analysis.syntax_check import file_error
from bufferlint.cache import Cache, content_hash
from bufferlint.findings import AnalysisResult, FileError, Finding, Span, TraceStep
from bufferlint.packs import Vocabulary
from bufferlint.source import read_bytes


@dataclass
class Scan:
    """The project's files as read at the start of a run."""

    root: Path
    raw: dict[Path, bytes]  # readable files
    hashes: dict[Path, str]
    unreadable: dict[Path, FileError]

    def key(self, path: Path) -> str:
        # A string prefix test (paths are absolute and normalised): Path.relative_to, called
        # for every file several times a run, was a third of a warm run's time.
        prefix = os.path.join(str(self.root), "")
        text = str(path)
        return text[len(prefix):].replace(os.sep, "/") if text.startswith(prefix) else text


def analyze_cached(root: Path, files: Collection[Path], report_files: Collection[Path], vocab: Vocabulary,
                   cache: Cache, progress: Callable[[int, int], None] | None = None) -> AnalysisResult:
    """``analysis.analyze_project``'s result (before rendering), through ``cache``."""
    scan = _read(root, sorted(set(files) | set(report_files)))
    report = set(report_files)
    facts = _facts(cache.load("files") or {})
    record = cache.load("run")
    stored = _reusable(record, scan)
    reused = stored is not None
    if stored is not None:
        parsed = stored.files_parsed
    else:
        to_check = [p for p in sorted(report) if p in scan.raw and "error" not in facts.get(scan.hashes[p], {})]
        readable = sorted(scan.raw)
        analysis = ProjectAnalysis(root, readable, readable, vocab, progress, raw=scan.raw, check_files=to_check)
        full = run_analysis(analysis)
        checked = {error.path: error.message for error in analysis.check_errors}
        for path in to_check:
            facts.setdefault(scan.hashes[path], {})["error"] = checked.get(path)
        stored = AnalysisResult(findings=full.findings, errors=analysis.own_errors, notices=full.notices)
        parsed = full.files_parsed
        record = {
            "files_parsed": parsed,
            "parsed": sorted(scan.key(p) for p in analysis.parsed),
            "names": sorted(analysis.trigger_names),
            "groups": [list(group) for group in analysis.seed_groups],
            "methods": sorted({name for o in analysis.program.outcomes.values() for kind, name in o.demands if kind == "method" and name}),
            "result": _encode_result(stored, scan),
        }
    for path in report:
        entry = facts.setdefault(scan.hashes[path], {}) if path in scan.raw else None
        if entry is not None and "error" not in entry:
            error = file_error(path)
            entry["error"] = error.message if error is not None else None
    for path, data in scan.raw.items():
        facts.setdefault(scan.hashes[path], {})["lines"] = data.count(b"\n")
    record["reused"] = reused  # how this run got its result (for tests and -v)
    record["manifest"] = {scan.key(p): h for p, h in scan.hashes.items()}
    record["unreadable"] = sorted(scan.key(p) for p in scan.unreadable)
    cache.save("run", record)
    cache.save("files", {h: facts[h] for h in scan.hashes.values()})
    result = _result_for(report, scan, stored, facts, parsed, cache.problems)
    result.cache = "the last analysis reused" if reused else "analysed, saved"
    return result


def _facts(body: dict) -> dict:
    """The per-content facts that are well formed (a damaged entry is checked again)."""
    facts = {}
    for digest, entry in body.items():
        if isinstance(entry, dict):
            kept = {}
            if isinstance(entry.get("lines"), int):
                kept["lines"] = entry["lines"]
            if "error" in entry and (entry["error"] is None or isinstance(entry["error"], str)):
                kept["error"] = entry["error"]
            facts[digest] = kept
    return facts


def _read(root: Path, files: list[Path]) -> Scan:
    raw, unreadable = {}, {}
    for path in files:
        data = read_bytes(path)
        if isinstance(data, FileError):
            unreadable[path] = data
        else:
            raw[path] = data
    return Scan(root, raw, {p: content_hash(d) for p, d in raw.items()}, unreadable)


def _reusable(record: dict | None, scan: Scan) -> AnalysisResult | None:
    """The recorded analysis, if it holds for these files (and is well formed)."""
    try:
        if record is None or not _still_valid(record, scan):
            return None
        result = _decode_result(record["result"], scan.root)
        result.files_parsed = int(record["files_parsed"])
        return result
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # a damaged record: analyse again


def _still_valid(record: dict, scan: Scan) -> bool:
    """Would the analysis of these files select and compute what ``record`` holds?"""
    manifest = record.get("manifest")
    if not isinstance(manifest, dict) or set(manifest) != {scan.key(p) for p in scan.raw}:
        return False
    if set(record.get("unreadable", ())) != {scan.key(p) for p in scan.unreadable}:
        return False
    parsed = set(record.get("parsed", ()))
    methods = set(record.get("methods", ()))
    pattern = word_pattern(set(record.get("names", ())), binary=True)
    groups = [tuple(group) for group in record.get("groups", ())]
    for path, digest in scan.hashes.items():
        key = scan.key(path)
        if manifest[key] == digest:
            continue
        data = scan.raw[path]
        if (key in parsed or (pattern is not None and pattern.search(data)) or mentions_group(data, groups)
                or methods.intersection(defined_names(data))):
            return False
    return True


def _result_for(report: set[Path], scan: Scan, stored: AnalysisResult, facts: dict, parsed: int,
                problems: list[str]) -> AnalysisResult:
    """The result a cold run reporting ``report`` gives: the same findings, and errors in the
    same order (unreadable, then the analysis's own, then the syntax check's)."""
    errors = [error for path, error in scan.unreadable.items() if path in report]
    errors += [error for error in stored.errors if error.path in report]
    known = {error.path for error in errors}
    for path in sorted(report):
        if path in scan.raw and path not in known:
            message = facts.get(scan.hashes[path], {}).get("error")
            if message is not None:
                errors.append(FileError(path, message))
    errors.sort(key=lambda error: str(error.path))
    return AnalysisResult(
        findings=[f for f in stored.findings if f.path in report],
        errors=errors,
        notices=sorted(set(stored.notices) | set(problems)),
        files_seen=len(scan.raw),
        files_parsed=parsed,
        lines_seen=sum(facts[h]["lines"] for h in scan.hashes.values()),
    )


# -- JSON form of findings and errors ---------------------------------------------------------

def _encode_result(result: AnalysisResult, scan: Scan) -> dict:
    return {
        "findings": [_encode_finding(f, scan) for f in result.findings],
        "errors": [[scan.key(e.path), e.message] for e in result.errors],
        "notices": list(result.notices),
    }


def _decode_result(body: dict, root: Path) -> AnalysisResult:
    return AnalysisResult(
        findings=[_decode_finding(f, root) for f in body["findings"]],
        errors=[FileError(root / path, message) for path, message in body["errors"]],
        notices=list(body["notices"]),
    )


def _encode_finding(finding: Finding, scan: Scan) -> dict:
    span = finding.span
    return {
        "rule": finding.rule, "span": [scan.key(span.path), span.line, span.column, span.end_line, span.end_column],
        "message": finding.message, "function": finding.function, "subject": finding.subject,
        "fix_error": finding.fix_error, "sink": finding.sink, "kind": finding.kind,
        "trace": [[scan.key(s.path), s.line, s.note, s.fact] for s in finding.trace],
    }


def _decode_finding(data: dict, root: Path) -> Finding:
    path, line, column, end_line, end_column = data["span"]
    return Finding(
        data["rule"], Span(root / path, line, column, end_line, end_column), data["message"], data["function"],
        tuple(TraceStep(root / p, n, note, _tuples(fact)) for p, n, note, fact in data["trace"]),
        subject=data["subject"], fix_error=data["fix_error"], sink=data["sink"], kind=data["kind"],
    )


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
