"""An edit inside functions the analysis interpreted, checked without analysing the project.

The cache (``analysis.cached``) holds the last analysis and, per parsed file, the log of
every analysis of its functions (``analysis.replay``). When an edited file differs from the
analysed version only inside interpreted functions (the same ``interface.Interface.outline``),
each such function is interpreted again against its recorded reads: if it writes and
produces exactly what it did, the analysis of the edited project is the recorded one.

The logs speak in the analysed version's lines, so the edited functions are renumbered into
them (``renumber``): a line the edit kept or changed takes its old number; a line it added
takes the number of the kept line before it, with its columns moved far past any real column,
so every position stays distinct and in source order. Findings then move back through the
inverse (``LineMap``), which only lines kept character for character have: a changed line's
columns (even its UTF-8 byte offsets) may name other characters, and a recorded position must
land on the very text it was found on. A finding on a changed line, or on a kept line that
added lines share a number with (the replay could not tell their trace steps apart), is not
placed, and the project is analysed again.
"""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bufferlint.analysis.frontend.index import FunctionInfo, ModuleInfo, ProjectIndex, module_name, normalize_newlines
from bufferlint.analysis.incremental.interface import Interface
from bufferlint.analysis.incremental.cutoff import FindingsDelta, Phases, RunFacts, cut_off
from bufferlint.analysis.incremental.replay import AnalysisLog, ModuleSource, Watch, replay_function

ADDED_COLUMN = 1 << 20  # columns of added lines start past this (real columns never reach it)


@dataclass(frozen=True)
class LineMap:
    """Lines of the analysed version -> lines of the edited one (None: not kept as they
    were, or shared with added lines); ``delta``: the findings that changed, when the edit
    changed what the edited functions tell others (``cutoff``)."""

    backward: dict[int, int]
    shared: frozenset
    delta: FindingsDelta | None = None

    def line(self, line: int) -> int | None:
        return None if line in self.shared else self.backward.get(line)


@dataclass(frozen=True)
class EditContext:
    """What following an edit's effects beyond the edited functions needs (``cutoff``):
    the recorded run's facts, any analysed function's logs and module, and this file's key."""

    facts: RunFacts
    logs_for: Callable[[str], list[AnalysisLog] | None]
    module_of: Callable[[str], str | None]
    key: Callable[[Path], str]


def renumber(old_lines: list[str], new_lines: list[str]) -> tuple[dict[int, tuple[int, int]], dict[int, int], set[int]]:
    """(edited line -> (analysed line, column shift), analysed line -> the edited line with
    its very text, the analysed lines that added lines were numbered after)."""
    forward: dict[int, tuple[int, int]] = {}
    backward: dict[int, int] = {}
    shared: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "delete":
            continue
        kept = j2 - j1 if tag == "equal" else min(i2 - i1, j2 - j1)
        for k in range(kept):
            forward[j1 + k + 1] = (i1 + k + 1, 0)
            if tag == "equal":
                backward[i1 + k + 1] = j1 + k + 1
        anchor = i1 + kept  # the analysed line before the added ones (0: the file's start)
        for k in range(kept, j2 - j1):
            forward[j1 + k + 1] = (anchor, ADDED_COLUMN * (k - kept + 1))
            shared.add(anchor)
    return forward, backward, shared


def _move_node(node: ast.AST, forward: dict[int, tuple[int, int]]) -> None:
    for child in ast.walk(node):
        for line_attr, column_attr in (("lineno", "col_offset"), ("end_lineno", "end_col_offset")):
            line = getattr(child, line_attr, None)
            if line is None:
                continue
            old, shift = forward[line]
            setattr(child, line_attr, old)
            column = getattr(child, column_attr, None)
            if column is not None:
                setattr(child, column_attr, column + shift)


def edited_functions(old: Interface, new: Interface) -> set[str] | None:
    """The analysed functions whose code or text changed (a comment or a space moves the
    positions the replay checks), with the analysed functions nested in them (their closures
    may have changed); None if the files differ elsewhere, or in an analysed range that is no
    function (the module's own statements, which are not replayed)."""
    if old.outline != new.outline or old.bodies is None or new.bodies is None or set(old.bodies) != set(new.bodies):
        return None
    if any(old.segments.get(q) != text for q, text in new.segments.items() if q not in new.bodies):
        return None
    changed = {q for q, body in new.bodies.items() if old.bodies[q] != body or old.segments.get(q) != new.segments.get(q)}
    return {q for q in new.bodies if any(q == c or q.startswith(c + ".") for c in changed)}


def check_edit(path: Path, root: Path, old_text: str, new_text: str, old: Interface, new: Interface,
               logs_of: Callable[[set[str]], dict[str, list[AnalysisLog]] | None],
               load: Callable[[str], ProjectIndex | None], outline: Callable[[str, str], list | None],
               module_names: Callable[[], frozenset], vocab, raw_vocab, context: EditContext) -> LineMap | None:
    """The line map from the analysed ``old_text`` to the edited ``new_text`` if every edited
    function replays its recorded analyses exactly, or if what changed stops within the
    functions replayed after them (``cutoff``: the map then carries the findings' change).
    None: analyse the project again. ``logs_of``: the recorded logs of these functions;
    ``load``: a module's index, as analysed; ``outline``: the recorded signature of a
    function (module, qualname) in a module as analysed; ``module_names``: every module of
    the project (computed when first needed)."""
    changed = edited_functions(old, new)
    if not changed or _attached_attributes(old, new) & context.facts.attached_asked:
        return None
    if _stored_attributes(old, new) & (context.facts.fields_asked | context.facts.observed):
        return None
    logs = logs_of(changed)
    if logs is None or set(logs) != changed:
        return None
    old_text, new_text = normalize_newlines(old_text), normalize_newlines(new_text)
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    forward, backward, shared = renumber(old_lines, new_lines)
    # A changed line keeps its number but is read as it now is: character columns come from
    # the text the byte offsets were taken in.
    renumbered = list(old_lines)
    for edited_line, (analysed_line, column_shift) in forward.items():
        if column_shift == 0:
            renumbered[analysed_line - 1] = new_lines[edited_line - 1]
    name, is_package = module_name(path, root)
    old_tree, new_tree = old.tree, new.tree  # parsed for the interfaces; changed in place below
    if old_tree is None or new_tree is None:
        return None
    old_nodes, new_nodes = _function_nodes(old_tree, name), _function_nodes(new_tree, name)
    outermost = {q for q in changed if not any(q.startswith(c + ".") for c in changed if c != q)}
    for qualname in outermost:
        node = new_nodes[qualname]
        _move_node(node, forward)
        if (node.lineno, node.col_offset) != (old_nodes[qualname].lineno, old_nodes[qualname].col_offset):
            return None  # its callers' recorded analyses may have read where it stands
        if not _replace(old_tree, old_nodes[qualname], node):
            return None
    index = ProjectIndex()
    index.add_module(ModuleInfo(name, path, old_tree, "\n".join(renumbered), is_package))  # the analysed version, edits in place
    modules = ModuleSource(lambda module: index if module == name else load(module), module_names, outline, name)
    observed = context.facts.observed
    if all(index.functions.get(q) is not None
           and replay_function(index.functions[q], logs[q], vocab, raw_vocab, modules, observed) for q in sorted(changed)):
        return LineMap(backward, frozenset(shared))
    versions = {"old": _module_index(name, path, old_text, is_package), "check": index,
                "new": _module_index(name, path, new_text, is_package)}

    def info(phase: str, qualname: str) -> FunctionInfo | None:
        module = context.module_of(qualname)
        table = versions[phase] if module == name else (load(module) if module is not None else None)
        return table.functions.get(qualname) if table is not None else None

    phases = Phases(
        {phase: ModuleSource(lambda module, phase=phase: versions[phase] if module == name else load(module), module_names,
                             outline, name)
         for phase in versions},
        info, lambda q: logs[q] if q in logs else context.logs_for(q),
        Watch(str(path), name + ".", frozenset(line for line in range(1, len(old_lines) + 1) if backward.get(line) != line)),
    )
    delta = cut_off(changed, phases, context.facts, vocab, raw_vocab, context.key, context.key(path), backward)
    return None if delta is None else LineMap(backward, frozenset(shared), delta)


def _attached_attributes(old: Interface, new: Interface) -> set[str]:
    """The attribute names whose stored callables the edit changed (inside analysed
    functions: the outline holds the others): an analysis that asked for them
    (``ProjectIndex.attached_functions``) could get another answer."""
    gone = [entry for entry in old.attachments if entry not in new.attachments]
    made = [entry for entry in new.attachments if entry not in old.attachments]
    return {attr for attr, _ in gone + made}


def _stored_attributes(old: Interface, new: Interface) -> set[str]:
    """The attribute names whose stores the edit changed in a class of the file
    (``Interface.fields``): an analysis that asked what such a field holds or is
    (``ProjectIndex.field_types``, ``field_objects``), or that reads it, could see another
    answer; a field nothing asks about or reads (``self._kept = w``) changes no other
    analysis."""
    keys = {key for key in old.fields.keys() | new.fields.keys() if old.fields.get(key) != new.fields.get(key)}
    return {key.rsplit(".", 1)[1] for key in keys}


def _module_index(name: str, path: Path, text: str, is_package: bool) -> ProjectIndex:
    index = ProjectIndex()
    index.add_module(ModuleInfo(name, path, ast.parse(text), text, is_package))
    return index


def _function_nodes(tree: ast.Module, module: str) -> dict[str, ast.AST]:
    index = ProjectIndex()
    index.add_module(ModuleInfo(module, Path("<edit>"), tree, "", False))
    return {q: info.node for q, info in index.functions.items()}


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> bool:
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if child is old:
                        value[i] = new
                        return True
    return False
