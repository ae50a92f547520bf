"""The whole-program analysis: parse -> per-module index -> per-function summaries ->
project-wide propagation to a fixpoint -> findings.

``analyze_project`` is the single entry point the CLI (and tests) use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Collection

from bufferlint.cache import Cache
from bufferlint.deepstack import run_deep
from bufferlint.findings import AnalysisResult
from bufferlint.packs import Vocabulary


def analyze_project(
    root: Path,
    files: Collection[Path],
    report_files: Collection[Path],
    vocab: Vocabulary,
    cache: Cache | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    check_files: Collection[Path] | None = None,
) -> AnalysisResult:
    """Analyse every file of the project rooted at ``root`` (``files``: all its Python files)
    and return findings and errors for ``report_files`` only. With a ``cache``, what the
    files did not change since the last run is reused (``bufferlint.analysis.incremental.cached``).

    All paths are absolute. Files outside ``report_files`` still contribute sources, guards
    and helper summaries; their own parse errors are not reported. The engine reports
    facts; the rules (``bufferlint.catalog``) put them into words. ``progress`` hears
    (files parsed, functions analysed) as they grow (see bufferlint.progress).
    ``check_files`` (only without a cache): the report files whose syntax and compile errors
    are reported, when that is fewer than all of them (verifying a fix asks only about the
    files it wrote: checking every other one again each round was most of its extra cost).
    """
    from bufferlint.catalog.words import render

    # Recursion depth follows the input (expression evaluation): see bufferlint.deepstack.
    if cache is not None and check_files is not None:
        raise ValueError("check_files is for uncached analyses: a cached run checks what changed")
    if cache is not None:  # the engine is imported only if the cache cannot answer
        from bufferlint.analysis.incremental.cached import analyze_cached

        return render(run_deep(analyze_cached, root, files, report_files, vocab, cache, progress), vocab)
    from bufferlint.analysis.whole.program import analyze

    return render(run_deep(analyze, root, files, report_files, vocab, progress, check_files), vocab)
