"""What the analysis reads of a parsed file beyond the functions it analysed: its interface.

An edit in a model file rarely touches the function the analysis looked at (``load_weights``);
it changes ``forward`` or adds a method. The analysis never interprets the body of a function
it did not analyse: it reads its signature, decorators, the names its body assigns (when
it encloses a function: they are its closure variables), the ``self.<attr>`` it reads and writes (the class's
fields and their readers), the pack words its lines mention (which select functions to
analyse), the functions it nests, and the file's imports, constants, classes, attachments and
``def`` names. :func:`file_interface` puts all of that, plus the full syntax tree of every
function that was analysed (without positions), into one digest. Two versions of a file with
the same digest give the same analysis, up to where the analysed functions sit. Positions are
never carried over on faith: a finding names lines and character columns, a fix edits a
range, a baseline fingerprints a line's text, a ``# noqa`` sits on a line. So each analysed
range's exact text (``Interface.segments``: whole lines, comments and spacing included) is
kept too, and :class:`LineShift` moves recorded positions only when every segment is
character for character the same, merely at other lines: every position inside then moves by
its segment's line offset, with its columns, and lands on the same text. A segment that
differs in any character (a comment, a space, a reformatted call) is an edit of that
function, which ``analysis.edits`` replays or the project is analysed again.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from bufferlint.analysis.frontend.index import FACTS, ClassInfo, FunctionInfo, ModuleInfo, ProjectIndex, module_name
from bufferlint.analysis.frontend.textscan import defined_names, mentions_group, word_pattern


@dataclass(frozen=True)
class Interface:
    digest: str
    ranges: dict[str, tuple[int, int]]  # analysed function -> (def line, last line)
    # The same facts without the analysed functions' bodies (their signatures, and what
    # other code reads of them, stay), and those bodies: two versions with the same outline
    # differ only inside analysed functions, which ``analysis.replay`` can check.
    outline: str = ""
    bodies: dict[str, str] | None = None
    segments: dict[str, str] = field(default_factory=dict)  # the exact lines of each range
    tree: ast.Module | None = field(default=None, compare=False)  # what it was read from (``edits`` reuses it)
    # Every callable stored under an attribute name (``ProjectIndex.attachments_in``), those
    # made inside analysed functions included: the outline holds only the others, and an
    # edit that changes these answers only analyses that asked (``edits.check_edit``).
    attachments: list = field(default_factory=list)
    # What the class bodies store into each attribute (``ClassInfo.fields`` and ``stores``, per
    # "class.attr"), also left out of the outline: an analysed function that starts keeping
    # a value in a field (``self._kept = w``) changes only that attribute's entry, which
    # matters to analyses that asked about the attribute (``edits.check_edit``).
    fields: dict[str, str] = field(default_factory=dict)


def file_interface(text: str, path: Path, root: Path, analysed: set[str], words: set[str],
                   groups: list[tuple[str, ...]]) -> Interface | None:
    """The interface of ``text`` as the file ``path`` of the project at ``root``, given the
    functions the analysis interpreted, the words whose mention selects a function (sources,
    markers, guards, producers, synchronisers) and the word groups a call must name together
    (``textscan.mentions_group``). None when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    name, is_package = module_name(path, root)
    module = ModuleInfo(name, path, tree, text, is_package)
    index = ProjectIndex()
    functions = index.add_module(module)
    # `from pkg import stream as it2`: the alias is how this file names a selecting word.
    words = set(words) | {local for local, target in module.imports.items() if target.rsplit(".", 1)[-1] in words}
    pattern = word_pattern(words)
    lines = module.text.split("\n")
    enclosing = {info.outer.qualname for info in functions if info.outer is not None}
    top = [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    attachments = _attachments(index, module)
    facts: dict[str, object] = {
        **{name: _plain(getattr(module, name)) for name in FACTS[ModuleInfo]},
        "top": [ast.dump(s) for s in top],
        "defs": defined_names(text.encode("utf-8", "surrogateescape")),
        "attachments": attachments,
        "classes": [_class_facts(info) for _, info in sorted(index.classes.items())],
    }
    per_function = [_function_facts(info, analysed, pattern, groups, lines, enclosing) for info in functions]
    facts["functions"] = per_function
    # An analysed function's facts end with its whole tree: its body, for the outline.
    bodies = {info.qualname: own[-1] for info, own in zip(functions, per_function)
              if info.qualname in analysed and info.kind != "module"}
    ranges = {
        info.qualname: (info.node.lineno, info.node.end_lineno or info.node.lineno)
        for info in functions if info.qualname in analysed and info.kind != "module"
    }
    outside = list(lines)
    for first, last in ranges.values():
        outside[first - 1:last] = [""] * (last - first + 1)
    outline_facts = dict(facts, functions=[
        own[:-1] + [_read_by_others(info)] if info.qualname in bodies else own
        for info, own in zip(functions, per_function)
    ], attachments=_attachments(index, ModuleInfo(name, path, tree, "\n".join(outside), is_package)),
        classes=[_class_facts(info, per_attribute=False) for _, info in sorted(index.classes.items())])
    if f"{name}.<module>" in analysed:
        # The module's own code is its top-level statements (the same when "top" is), and
        # the decorators and defaults of its definitions (in "functions" and "classes").
        for i, stmt in enumerate(top):
            ranges[f"{name}.<top:{i}>"] = (stmt.lineno, stmt.end_lineno or stmt.lineno)
    segments = {qualname: "\n".join(lines[first - 1:last]) for qualname, (first, last) in ranges.items()}
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()
    outline = hashlib.sha256(json.dumps(outline_facts, sort_keys=True, default=str).encode()).hexdigest()
    return Interface(digest, ranges, outline, bodies, segments, tree=tree, attachments=attachments,
                     fields=_field_entries(index))


def _attachments(index: ProjectIndex, module: ModuleInfo) -> list:
    return sorted((k, v) for k, vs in index.attachments_in(module).items() for v in vs)


def _field_entries(index: ProjectIndex) -> dict[str, str]:
    """ "class.attr" -> a digest of what the class's body and methods store there."""
    out = {}
    for qualname, info in sorted(index.classes.items()):
        entries: dict[str, list] = {}
        for name in PER_ATTRIBUTE:
            for attr, value in getattr(info, name).items():
                entries.setdefault(attr, [None] * len(PER_ATTRIBUTE))[PER_ATTRIBUTE.index(name)] = _plain(value)
        for attr, value in entries.items():
            out[f"{qualname}.{attr}"] = hashlib.sha256(json.dumps(value, default=str).encode()).hexdigest()
    return out


def _read_by_others(info: FunctionInfo) -> list:
    """What other analyses (its callers, its nested functions) read of an analysed function
    besides its index entry: its signature, decorators, whether it is a generator or a
    coroutine, the names it declares global. (The names it assigns are its nested functions'
    closure variables: an analysed nested function of an edited one is replayed too.)"""
    node = info.node
    signature = [ast.dump(node.args)]
    if not isinstance(node, ast.Lambda):
        signature += [ast.dump(d) for d in node.decorator_list] + [ast.dump(node.returns) if node.returns else None]
    return signature + [info.is_generator, sorted(info.declared_globals)]


PER_ATTRIBUTE = ("fields", "stores")  # class facts kept per attribute (``Interface.fields``)


def _class_facts(info: ClassInfo, per_attribute: bool = True) -> list:
    """The class as the analysis reads it: the index's facts of it (``index.FACTS``: bases,
    methods, and what its methods do with ``self.<attr>``, whether or not they were
    interpreted), and its keywords, decorators and body statements; without the facts kept
    per attribute unless ``per_attribute``."""
    facts = [_plain(getattr(info, name)) for name in FACTS[ClassInfo] if per_attribute or name not in PER_ATTRIBUTE]
    node = info.node
    if node is None:
        return facts
    body = [ast.dump(s) for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    decorators = [ast.dump(d) for d in node.decorator_list]
    return facts + [[ast.dump(k) for k in node.keywords], decorators, body]


def _function_facts(info: FunctionInfo, analysed: set[str], pattern, groups, lines: list[str], enclosing: set[str]) -> list:
    node = info.node
    head = [_plain(getattr(info, name)) for name in FACTS[FunctionInfo]] + [type(node).__name__]
    if info.kind == "module":
        return head
    if info.qualname in analysed:
        return head + [ast.dump(node)]
    first = node.lineno
    last = node.end_lineno or first
    text = "\n".join(lines[first - 1:last])
    mentioned = sorted(set(pattern.findall(text))) if pattern is not None else []
    mentioned += [list(group) for group in groups if mentions_group(text.encode("utf-8", "surrogateescape"), [group])]
    signature = [ast.dump(node.args)]
    if not isinstance(node, ast.Lambda):
        signature += [ast.dump(d) for d in node.decorator_list] + [ast.dump(node.returns) if node.returns else None]
    # The names it assigns are its nested functions' closure variables (only those read them).
    assigned = sorted(info.assigned) if info.qualname in enclosing else None
    return head + signature + [assigned, mentioned]


def _plain(fact: object) -> object:
    """An index fact as JSON takes it, in an order that does not depend on the run: entries
    by qualname, syntax dumped, sets and mappings sorted, literals other than text and
    numbers by their ``repr``."""
    if isinstance(fact, (FunctionInfo, ClassInfo)):
        return fact.qualname
    if isinstance(fact, ast.AST):
        return ast.dump(fact)
    if isinstance(fact, dict):
        return sorted([key, _plain(value)] for key, value in fact.items())
    if isinstance(fact, (set, frozenset)):
        return sorted((_plain(item) for item in fact), key=repr)
    if isinstance(fact, (list, tuple)):
        return [_plain(item) for item in fact]
    if fact is None or isinstance(fact, (str, int, float)):
        return fact
    return repr(fact)


def line_shift(root: Path, old: Interface, new: Interface) -> LineShift | None:
    """The shift from ``old`` to ``new`` if the same analysis holds for both and every
    analysed range kept its exact text (None: an edit, or another analysis)."""
    if old.digest != new.digest or old.segments != new.segments:
        return None
    return LineShift(root, old.ranges, new.ranges)


@dataclass(frozen=True)
class LineShift:
    """Where each analysed range of one file moved, its text unchanged (``line_shift``): a
    line inside one (the innermost holding it) moves with it, and its columns stay. A line in
    no analysed range cannot be placed (None)."""

    root: Path  # of the project (the file's module name is found from it)
    old: dict[str, tuple[int, int]]
    new: dict[str, tuple[int, int]]

    def line(self, line: int) -> int | None:
        best = None
        for qualname, (first, last) in self.old.items():
            if first <= line <= last and (best is None or last - first < best[1] - best[0]):
                best = (first, last, qualname)
        if best is None:
            return None
        return line + self.new[best[2]][0] - best[0]
