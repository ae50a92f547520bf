"""The planning interface shared by the fixers.

A fixer's ``candidates(finding, source_text, context) -> list[Fix]`` (looked up by rule in
``planners.py``) computes fixes for one finding from the reported file's text alone, with LibCST: nodes are found by the finding's span
(``libcst.metadata.PositionProvider``) and every fix is a list of text :class:`Edit`s, so
everything outside the edited ranges stays byte-identical (formatting, comments, line
endings). The only other thing a fixer may read is the project's own modules, to learn
which of them define a configured guard or a marker constant.

Library knowledge (guard names, marker attributes) comes from the :class:`Vocabulary`;
nothing here names a particular library.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from bufferlint.analysis.frontend.index import ModuleInfo, ProjectIndex, absolute_module, module_name
from bufferlint.findings import Edit, Finding, Fix
from bufferlint.packs import Vocabulary
from bufferlint.source import SourceFile, parse_source, read_source
from bufferlint.textlines import split_lines

SAFE, UNSAFE = "safe", "unsafe"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Project:
    """What fixers may know beyond one file: the vocabulary, the project root, and which
    project file implements a dotted module name (computed lazily, once per run).

    Module names, import bindings and constants are the analysis index's
    (``bufferlint.analysis.frontend.index``): a fixer must see a module exactly as the engine that
    reported the finding saw it, so the modules a fixer asks about are indexed on demand."""

    def __init__(self, root: Path, vocab: Vocabulary, files: Iterable[Path] = ()) -> None:
        self.root = root
        self.vocab = vocab
        self.files = list(files)
        self._modules: dict[str, Path] | None = None
        self._module_names: dict[Path, tuple[str, bool]] = {}
        self._index = ProjectIndex()
        self._indexed: dict[Path, ModuleInfo | None] = {}

    def module_name(self, path: Path) -> tuple[str, bool]:
        if path not in self._module_names:
            self._module_names[path] = module_name(path, self.root)
        return self._module_names[path]

    def module_file(self, dotted: str) -> Path | None:
        """The project file that is module ``dotted``, if the project has one."""
        if self._modules is None:
            self._modules = {}
            for path in self.files:
                if path.suffix == ".py":
                    self._modules.setdefault(self.module_name(path)[0], path)
        return self._modules.get(dotted)

    def module_info(self, path: Path) -> ModuleInfo | None:
        """The project file as the analysis indexes it (None when it cannot be parsed)."""
        if path not in self._indexed:
            self._indexed[path] = None
            source = read_source(path)
            tree = parse_source(source) if isinstance(source, SourceFile) else source
            if isinstance(tree, ast.Module):
                name, is_package = self.module_name(path)
                info = ModuleInfo(name, path, tree, source.text, is_package)
                self._index.add_module(info)
                self._indexed[path] = info
        return self._indexed[path]

    def constant_value(self, qualname: str) -> object:
        """The literal value of the project constant ``pkg.mod.NAME``, following re-exports
        (``from .consts import NAME``): the modules along the way are indexed, then the
        index resolves the name."""
        target = qualname
        for _ in range(4):
            module, _, name = target.rpartition(".")
            path = self.module_file(module) if module else None
            info = self.module_info(path) if path is not None else None
            if info is None or name in info.constants or name not in info.imports:
                break
            target = info.imports[name]
        found, value = self._index.constant(qualname)
        return value if found else None


@dataclass
class FixContext:
    """The project, and the reported file being fixed."""

    project: Project
    path: Path
    rejected: frozenset = frozenset()  # (finding key, fix message) of fixes that failed verification
    focus: tuple[int, ...] = ()  # the lines of the findings to fix (empty: the whole file matters)
    _sources: dict = field(default_factory=dict)

    @property
    def vocab(self) -> Vocabulary:
        return self.project.vocab

    def source(self, text: str) -> "SourceModule":
        cached = self._sources.get("text")
        if cached is None or cached.text != text:
            module, is_package = self.project.module_name(self.path)
            cached = self._sources["text"] = SourceModule(text, module, is_package, self.focus)
        return cached


class SourceModule:
    """One file's text, its LibCST tree with positions and parents, and position helpers.
    LibCST columns are 0-based characters; :class:`Edit` columns are 1-based.

    ``focus``: the lines fixes are planned for. The tree is then built from
    :func:`focused_text`, so its cost follows the code around the findings, not the file's
    size (LibCST with positions takes minutes on a 5 MiB module)."""

    def __init__(self, text: str, module_name: str = "", is_package: bool = False, focus: Iterable[int] = ()) -> None:
        self.text = text
        self.module_name = module_name
        self.is_package = is_package
        focus = tuple(focus)
        focused, self.stubs = focused_text(text, focus) if focus else (text, {})
        self.tree = cst.parse_module(focused)
        self.positions = node_positions(self.tree)
        self.parents = parent_map(self.tree)
        self._by_kind: dict[type, list[cst.CSTNode]] = {}
        self.newline = self.tree.default_newline
        self.indent_unit = self.tree.default_indent
        self.lines = split_lines(text)

    # -- positions --------------------------------------------------------------------

    def range(self, node: cst.CSTNode) -> CodeRange:
        return self.positions[node]

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line break; "" past the end."""
        if 0 < line <= len(self.lines):
            return _LINE_BREAK.sub("", self.lines[line - 1])
        return ""

    def indent_of(self, line: int) -> str:
        text = self.line_text(line)
        return text[: len(text) - len(text.lstrip(" \t"))]

    def code(self, node: cst.CSTNode) -> str:
        return self.tree.code_for_node(node)

    def walk(self, kind: type) -> Iterator:
        """The nodes of type ``kind``, in the order of their positions (the list is made once
        per kind: every finding of the file looks its nodes up by span)."""
        nodes = self._by_kind.get(kind)
        if nodes is None:
            nodes = self._by_kind[kind] = [node for node in self.positions if isinstance(node, kind)]
        return iter(nodes)

    def descendants(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """``node`` and every node below it, in no particular order (for questions whose
        answer does not depend on it: cheaper than a walk of the whole module)."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(_child_nodes(current))

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        parent = self.parents.get(node)
        while parent is not None:
            yield parent
            parent = self.parents.get(parent)

    def node_at_span(self, kind: type, finding: Finding) -> cst.CSTNode | None:
        """The ``kind`` node whose range is the finding's span; else the smallest enclosing it."""
        span = finding.span
        start, end = (span.line, span.column - 1), (span.end_line, span.end_column - 1)
        best = None
        for node in self.walk(kind):
            where = self.positions[node]
            node_start, node_end = (where.start.line, where.start.column), (where.end.line, where.end.column)
            if (node_start, node_end) == (start, end):
                return node
            if node_start <= start and end <= node_end and (best is None or _size(where) < _size(self.positions[best])):
                best = node
        return best

    # -- module-level names -------------------------------------------------------------

    def imported_names(self) -> dict[str, str]:
        """Local name -> qualified name for the module's top-level imports (``import a.b as c``
        binds ``c`` to ``a.b``; ``import a.b`` binds ``a`` to ``a``)."""
        names: dict[str, str] = {}
        for stmt in self._top_level_small_statements():
            if isinstance(stmt, cst.Import):
                for alias in stmt.names:
                    dotted = _dotted(alias.name)
                    if dotted is None:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        names[alias.asname.name.value] = dotted
                    else:
                        names[dotted.split(".")[0]] = dotted.split(".")[0]
            elif isinstance(stmt, cst.ImportFrom) and not isinstance(stmt.names, cst.ImportStar):
                base = absolute_module(
                    _dotted(stmt.module) if stmt.module is not None else None,
                    len(stmt.relative),
                    self.module_name,
                    self.is_package,
                )
                if base is None:
                    continue
                for alias in stmt.names:
                    dotted = _dotted(alias.name)
                    if dotted is None:
                        continue
                    local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else dotted
                    names[local] = f"{base}.{dotted}"
        return names

    def top_level_bindings(self) -> dict[str, cst.CSTNode]:
        """Names bound at module level by def, class or simple assignment."""
        bound: dict[str, cst.CSTNode] = {name: _STUB[kind] for name, kind in self.stubs.items()}
        for stmt in self.tree.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                bound[stmt.name.value] = stmt
        for small in self._top_level_small_statements():
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        bound[target.target.value] = small
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                bound[small.target.value] = small
        return bound

    def bound_names(self) -> set[str]:
        return set(self.imported_names()) | set(self.top_level_bindings())

    def local_name_for(self, qualname: str) -> str | None:
        """How this module can refer to ``qualname`` without a new import: a name imported
        from its module (``from m import f`` / ``as g``), an attribute of an imported module
        (``m.f``), or its own top-level definition."""
        module, _, name = qualname.rpartition(".")
        imported = self.imported_names()
        for local, target in imported.items():
            if target == qualname:
                return local
        for local, target in imported.items():
            if qualname.startswith(target + "."):
                if local == target.split(".")[0] and target != local:
                    continue
                return local + qualname[len(target):]
        if module == self.module_name and isinstance(self.top_level_bindings().get(name), cst.FunctionDef):
            return name
        return None

    def import_edit(self, statement: str) -> Edit:
        """Insert ``statement`` as a new line after the module's last top-level import (before
        the first definition), else after the docstring and ``__future__`` imports."""
        line = 1
        body = list(self.tree.body)
        for index, stmt in enumerate(body):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(stmt, cst.SimpleStatementLine):
                is_import = all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)
                is_docstring = index == 0 and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) and isinstance(
                    stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)
                )
                if is_import or is_docstring:
                    line = self.positions[stmt].end.line + 1
        if line > len(self.lines) and self.lines and not _LINE_BREAK.search(self.lines[-1]):
            # the last line has no line break: add one before the import
            end = len(self.lines[-1])
            return Edit(len(self.lines), end + 1, len(self.lines), end + 1, self.newline + statement)
        return Edit(line, 1, line, 1, statement + self.newline)

    def _top_level_small_statements(self) -> Iterator[cst.BaseSmallStatement]:
        for stmt in self.tree.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                yield from stmt.body
            elif isinstance(stmt, cst.If) and _is_type_checking(stmt.test):
                continue  # names imported only for type checkers do not exist at run time
            elif isinstance(stmt, (cst.If, cst.Try)):
                for inner in _blocks(stmt):
                    for small_line in inner:
                        if isinstance(small_line, cst.SimpleStatementLine):
                            yield from small_line.body


def node_positions(tree: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Node -> its range, as ``MetadataWrapper(tree).resolve(PositionProvider)`` gives it,
    without the wrapper's resolver: that one also runs a visitor pass over the whole tree
    for the batchable providers, even when none was asked for (a third of the cost)."""
    return PositionProvider()._gen(MetadataWrapper(tree, unsafe_skip_copy=True))


def parent_map(tree: cst.CSTNode) -> dict[cst.CSTNode, cst.CSTNode]:
    """Node -> its parent, for every node below ``tree``: the mapping LibCST's
    ``ParentNodeProvider`` gives, read from the nodes' dataclass fields directly. The
    provider runs two visitor passes (one of them per node, for ``children``) and was half
    of the time spent planning fixes on large files; this takes a tenth of it."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in _child_nodes(node):
            parents[child] = node
            stack.append(child)
    return parents


def _child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes held in ``node``'s fields (``children`` without LibCST's visitor, and not
    necessarily in source order)."""
    node_type = cst.CSTNode
    for name in _node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, node_type):
            yield value
        elif type(value) in (tuple, list):  # body, args, decorators, ...
            for item in value:
                if isinstance(item, node_type):
                    yield item


_FIELDS: dict[type, tuple[str, ...]] = {}


def _node_fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def focused_text(text: str, lines: Iterable[int]) -> tuple[str, dict[str, str]]:
    """``text`` reduced to what fixes for ``lines`` can need, and the top-level names that
    were reduced away (name -> ``"def"`` or ``"class"``).

    Each run of consecutive top-level functions and classes that hold none of ``lines``
    becomes one statement over the same lines, ``def <first name>(): \"\"\"<the same line
    breaks>\"\"\"``: a handful of syntax nodes instead of the whole code. Inside a class that
    holds one of the lines, runs of its methods (and nested classes) that hold none are
    reduced the same way: a fixer works in the function that holds its finding and the
    scopes around it, never in a sibling method, and a model class is mostly methods the
    findings are not in. Every other line is unchanged, so positions (and so the fixes'
    edits) are those of ``text``; imports and constants are all there, and the names the
    top-level runs bound are returned so that the module's top-level bindings stay the
    same. Text that does not parse is returned unchanged."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text, {}
    wanted = sorted(set(lines))
    out = split_lines(text)
    stubs: dict[str, str] = {}
    for run in _reducible_runs(tree.body, wanted, out, top_level=True):
        first = _first_line(run[0])
        last = run[-1].end_lineno or run[-1].lineno
        indent = _indentation(out[first - 1])
        for number in range(first, last + 1):
            out[number - 1] = out[number - 1][len(_LINE_BREAK.sub("", out[number - 1])):]
        head = f"{indent}def {run[0].name}(): "
        if first == last:
            out[first - 1] = head + "pass" + out[first - 1]
        else:
            out[first - 1] = head + '"""' + out[first - 1]
            out[last - 1] = '"""' + out[last - 1]
        if not indent:
            for stmt in run:
                stubs[stmt.name] = "class" if isinstance(stmt, ast.ClassDef) else "def"
    return "".join(out), stubs


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


def _reducible_runs(body: list[ast.stmt], wanted: list[int], out: list[str], top_level: bool) -> list[list[ast.stmt]]:
    """The runs of consecutive definitions in ``body`` holding none of the ``wanted`` lines,
    and, inside a class that holds one, the runs of its body. A member is reduced only when
    it starts its own line (nothing but indentation before it, so the stub can take its
    place) and a class keeps at least one statement (the stub is one)."""
    runs: list[list[ast.stmt]] = []
    previous = None
    for stmt in body:
        first, last = _first_line(stmt), stmt.end_lineno or stmt.lineno
        position = bisect.bisect_left(wanted, first)
        holds = position < len(wanted) and wanted[position] <= last
        line = out[first - 1]
        own_line = top_level or (
            line.lstrip(" \t").startswith("@") if getattr(stmt, "decorator_list", None) else not line[:stmt.col_offset].strip(" \t")
        )
        reducible = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not holds and own_line
        if reducible:
            if previous is not None and runs:
                runs[-1].append(stmt)
            else:
                runs.append([stmt])
        elif holds and isinstance(stmt, ast.ClassDef):
            runs += _reducible_runs(stmt.body, wanted, out, top_level=False)
        previous = stmt if reducible else None
    return runs


_STUB = {
    "def": cst.FunctionDef(cst.Name("stub"), cst.Parameters(), cst.SimpleStatementSuite([cst.Pass()])),
    "class": cst.ClassDef(cst.Name("stub"), cst.SimpleStatementSuite([cst.Pass()])),
}


def _blocks(stmt: cst.CSTNode) -> Iterator[Iterable[cst.CSTNode]]:
    if isinstance(stmt, cst.If):
        if isinstance(stmt.body, cst.IndentedBlock):
            yield stmt.body.body
        if isinstance(stmt.orelse, cst.Else) and isinstance(stmt.orelse.body, cst.IndentedBlock):
            yield stmt.orelse.body.body
    elif isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
        yield stmt.body.body


def _is_type_checking(test: cst.BaseExpression) -> bool:
    return (isinstance(test, cst.Name) and test.value == "TYPE_CHECKING") or (
        isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING"
    )


def _dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def dotted_name(node: cst.CSTNode) -> str | None:
    return _dotted(node)


def _size(where: CodeRange) -> tuple[int, int]:
    return (where.end.line - where.start.line, where.end.column - where.start.column)


Planner = Callable[[Finding, str, FixContext], "list[Fix]"]


def finding_key(finding: Finding) -> tuple:
    """What identifies a finding across edits that move it: rule, file, function, subject."""
    return (finding.rule, finding.path, finding.function, finding.subject)
