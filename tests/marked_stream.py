"""What the engine's unit tests on guards build on: the seed's producer (a generator that
marks each tensor with the RunAI marker and yields it) and the analysis of one module made
of it and a test's own code."""

from __future__ import annotations

from pathlib import Path

from bufferlint.analysis import analyze_project
from bufferlint.findings import AnalysisResult
from bufferlint.packs import builtin_vocabulary

MARKED_STREAM = '''\
MARKER = "_sglang_runai_streamer_tensor"
MARKERS = (MARKER, "_other")


def stream(tensors):
    for name, tensor in tensors:
        setattr(tensor, MARKER, True)
        yield name, tensor


'''


def analyse_module(tmp_path: Path, text: str) -> AnalysisResult:
    """The findings of the module ``text``, alone in a project at ``tmp_path``."""
    path = tmp_path / "m.py"
    path.write_text(text, encoding="utf-8")
    return analyze_project(tmp_path, [path], [path], builtin_vocabulary())
