"""The project's import graph, read from every file's text (parsed or not), and which
modules a module's code can reach through it.

Why: a method called on a receiver of unknown type (``model.load_weights(weights)``) is
resolved by name; the classes that can be that receiver are those whose module is loaded
where the call runs, so the engine narrows the candidates to the modules the caller's own
imports cover (``reachable``). The analysis parses only a few files, so the graph is read
from the text of all of them, with the same cheap scan the cache runs on a changed file
(``scan_imports``: one definition, so the cache can tell when an edit changes the graph).

A module that loads modules by name (``importlib.import_module``, ``pkgutil.iter_modules``,
``walk_packages``, ``__import__``) and names a project package in a string literal is a
*registry*: it is taken to import every module of that package (sglang's
``srt/models/registry.py`` imports each module of ``sglang.srt.models``).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import deque
from dataclasses import dataclass

_FROM = re.compile(rb"from[ \t]+(\.*[\w.]*)[ \t]*")
_COMMENT = re.compile(rb"#[^\n]*")
_NAME = re.compile(rb"[A-Za-z_][\w.]*")
_LOADS_BY_NAME = (b"import_module", b"iter_modules", b"walk_packages", b"__import__")
# A module ``__getattr__`` (PEP 562) loads by name only what its users ask of it.
_LAZY_ATTRIBUTES = re.compile(rb"(?:^|\n)(?:async[ \t]+)?def[ \t]+__getattr__[ \t]*\(")
# A dotted name right after a quote (``"pkg.models"``, ``f"pkg.models.{name}"``).
_LITERAL = re.compile(rb"""['"]([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)""")


@dataclass(frozen=True)
class ModuleImports:
    """What one module's text imports: dotted names (a module, or a name in one) resolved
    against its package, and the dotted names its string literals spell if it loads modules
    by name (candidate registry packages)."""

    imported: tuple[str, ...]
    by_name: tuple[str, ...]

    def digest(self) -> str:
        """A short fingerprint, which the cache compares for a changed file."""
        text = "\0".join(self.imported) + "\1" + "\0".join(self.by_name)
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def scan_imports(data: bytes, module: str, is_package: bool) -> ModuleImports:
    """The import statements of a module's text (at any depth: a function's own imports
    count, as they run when it does), without parsing it. A statement's line must start
    with ``import`` or ``from``; a word ``import`` elsewhere is ignored."""
    package = module if is_package else module.rpartition(".")[0]
    imported: set[str] = set()
    for start in _words(data, b"import"):
        newline = data.rfind(b"\n", 0, start)
        line = max(newline, data.rfind(b"\r", newline + 1, start)) + 1
        head = data[line:start].strip()
        rest = _statement_rest(data, start + len(b"import"))
        if not head:
            for part in rest.split(b","):
                name = _NAME.match(part.strip())
                if name:
                    imported.add(name.group().decode("ascii", "replace"))
            continue
        source = _FROM.fullmatch(head)
        if source is None:
            continue
        base = _absolute(source.group(1).decode("ascii", "replace"), package)
        if base is None:
            continue
        imported.add(base)
        for part in rest.strip().strip(b"()").split(b","):
            name = _NAME.match(part.strip())
            if name and b"." not in name.group():
                imported.add(f"{base}.{name.group().decode('ascii', 'replace')}" if base else name.group().decode())
    by_name: set[str] = set()
    if any(word in data for word in _LOADS_BY_NAME) and not _LAZY_ATTRIBUTES.search(data):
        by_name = {m.group(1).decode("ascii", "replace") for m in _LITERAL.finditer(data)}
    return ModuleImports(tuple(sorted(n for n in imported if n)), tuple(sorted(by_name)))


def _words(data: bytes, word: bytes):
    """Where ``word`` occurs as a whole word (a substring search: much faster than a regex
    starting with ``\\b``, which defeats the engine's literal scan)."""
    position = data.find(word)
    while position >= 0:
        end = position + len(word)
        before = data[position - 1:position] if position else b" "
        after = data[end:end + 1] or b" "
        if not (before.isalnum() or before == b"_" or after.isalnum() or after == b"_"):
            yield position
        position = data.find(word, end)


def _statement_rest(data: bytes, position: int) -> bytes:
    """The names after ``import``: to the end of the line (or a ``;``), or to the closing
    parenthesis; comments left out."""
    end = data.find(b"\n", position)
    end = len(data) if end < 0 else end
    if data[position:end].lstrip().startswith(b"("):
        close = data.find(b")", position)
        end = len(data) if close < 0 else close + 1
    text = _COMMENT.sub(b"", data[position:end])
    cut = text.find(b";")
    if cut >= 0:
        text = text[:cut]
    return text.replace(b" as ", b" ").replace(b"\\", b" ")


def _absolute(name: str, package: str) -> str | None:
    """``from .x import y`` in ``package``: the module ``x`` names (None above the top)."""
    dots = len(name) - len(name.lstrip("."))
    if not dots:
        return name
    parts = package.split(".") if package else []
    if dots - 1 > len(parts):
        return None
    base = parts[: len(parts) - (dots - 1)]
    tail = name[dots:]
    return ".".join(base + ([tail] if tail else []))


# Why a module is reachable from another: imported (directly or not), or loaded by a
# registry, (registry module, package).
IMPORTED = "imported"

# The same, as the engine records it (plain tuples of text: the cache logs it as an answer):
# ("imported",) or ("registry", registry module, package).
Reached = tuple[str, ...]


def reached(why: tuple[str, str] | str | None) -> Reached | None:
    """``ImportGraph.reachable``'s reason for one module as a ``Reached`` (None: not reached)."""
    if why is None:
        return None
    return (IMPORTED,) if why == IMPORTED else ("registry", *why)


class ImportGraph:
    """Modules and their imports; each module's search for what it loads is kept and resumed."""

    def __init__(self, imports: dict[str, ModuleImports]) -> None:
        self.scanned = imports  # each module's imports as read (the cache records their digests)
        self.modules = set(imports)
        self._ordered = sorted(self.modules)
        self._edges: dict[str, list[tuple[str, tuple[str, str] | None]]] = {}
        for module, found in imports.items():
            self._edges[module] = self._resolve(module, found)
        # module -> (what its search has reached so far, the search's queue): see ``reason``
        self._memo: dict[str, tuple[dict[str, tuple[str, str] | str], deque]] = {}
        self._closures: dict[str, int] | None = None  # see ``_may_reach``
        self._plain_closures: dict[str, int] | None = None  # see ``_plainly_reaches``
        self._bit: dict[str, int] = {}

    def _resolve(self, module: str, found: ModuleImports) -> list[tuple[str, tuple[str, str] | None]]:
        """The modules an import statement loads: the named module (or the module holding
        the named name) and its parent packages; a registry's packages' every module (a
        namespace package, without ``__init__.py``, too)."""
        targets: dict[str, tuple[str, str] | None] = {}
        for name in found.imported:
            parts = name.split(".")
            for cut in range(1, len(parts) + 1):
                prefix = ".".join(parts[:cut])
                if prefix in self.modules:
                    targets.setdefault(prefix, None)
        for package in found.by_name:
            for other in self._inside(package):
                if other != module:
                    targets.setdefault(other, (module, package))
        return sorted(targets.items(), key=lambda item: item[0])

    def _inside(self, package: str) -> list[str]:
        """The module ``package`` names and every module under it."""
        inside = package + "."
        position = bisect.bisect_left(self._ordered, package)
        found = []
        for other in self._ordered[position:]:
            if other != package and not other.startswith(inside):
                if other > inside:
                    break
                continue
            found.append(other)
        return found

    def reachable(self, module: str) -> dict[str, tuple[str, str] | str]:
        """Every module ``module``'s code can have loaded (its own imports, theirs, and the
        parent packages of each), each with why: ``IMPORTED`` when plain imports reach it,
        else the registry that loads it or the module it was reached through, (registry
        module, the package it loads). Paths through fewer registries win (a 0-1 search)."""
        why, queue = self._search(module)
        while queue:
            self._step(why, queue, module)
        return why

    def reason(self, module: str, target: str) -> tuple[str, str] | str | None:
        """``reachable(module).get(target)``, searching only until ``target`` is reached: a
        call dispatched by method name asks this for each module defining the method, and
        most are reached long before the search has seen every module (the search is
        resumed, never redone, by the next question: a module's first visit in a 0-1 search
        is its best, so stopping early changes no answer)."""
        why, queue = self._search(module)
        if target not in why and queue:
            if self._plainly_reaches(module, target):
                return IMPORTED  # what the search would find: plain imports cost it nothing
            if not self._may_reach(module, target):
                return None  # the search would have to see everything reachable to say so
        while target not in why and queue:
            self._step(why, queue, module)
        return why.get(target)

    def _may_reach(self, module: str, target: str) -> bool:
        """Does any chain of imports (registries included) lead from ``module`` or its parent
        packages to ``target``? Answered from each module's reachable set as a bit set,
        computed once for the whole graph (its strongly connected parts first)."""
        if self._closures is None:
            self._closures = self._reachable_sets(plain=False)
        return self._in_closure(self._closures, module, target)

    def _plainly_reaches(self, module: str, target: str) -> bool:
        """Does a chain of plain imports (no registry) lead from ``module`` or its parent
        packages to ``target``? The 0-1 search visits every such module before any module a
        registry loads, with ``IMPORTED`` as its reason, so this is its answer without the
        search: half of a run's questions (46,863 of 125,259 on sglang 0.5.23), and the
        search's steps for them were a tenth of a cold check."""
        if target == module:
            return True  # the search's first step, even for a module the graph does not hold
        if self._plain_closures is None:
            self._plain_closures = self._reachable_sets(plain=True)
        return self._in_closure(self._plain_closures, module, target)

    def _in_closure(self, closures: dict[str, int], module: str, target: str) -> bool:
        bit = self._bit.get(target)
        if bit is None:
            return False
        parts = module.split(".")
        starts = [module] + [".".join(parts[:cut]) for cut in range(1, len(parts))]
        return any(closures.get(start, 0) >> bit & 1 for start in starts)

    def _reachable_sets(self, plain: bool) -> dict[str, int]:
        """Every module's reachable modules (itself included) as bits of ``_bit``, through
        every import or (``plain``) through plain imports only: Tarjan's strongly connected
        components, each closed over the components it imports (which Tarjan finishes
        first)."""
        order = self._ordered
        self._bit = {name: i for i, name in enumerate(order)}
        successors = [[self._bit[t] for t, registry in self._edges.get(name, ())
                       if t in self._bit and not (plain and registry is not None)] for name in order]
        index = [-1] * len(order)
        low = [0] * len(order)
        on_stack = [False] * len(order)
        stack: list[int] = []
        closure = [0] * len(order)
        counter = 0
        for root in range(len(order)):
            if index[root] >= 0:
                continue
            work = [(root, 0)]
            while work:
                node, position = work.pop()
                if position == 0:
                    index[node] = low[node] = counter
                    counter += 1
                    stack.append(node)
                    on_stack[node] = True
                pushed = False
                for k in range(position, len(successors[node])):
                    nxt = successors[node][k]
                    if index[nxt] < 0:
                        work.append((node, k + 1))
                        work.append((nxt, 0))
                        pushed = True
                        break
                    if on_stack[nxt]:
                        low[node] = min(low[node], index[nxt])
                if pushed:
                    continue
                if low[node] == index[node]:  # a component: its members and what they import
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack[member] = False
                        members.append(member)
                        if member == node:
                            break
                    bits = 0
                    for member in members:
                        bits |= 1 << member
                    for member in members:
                        for nxt in successors[member]:
                            if not on_stack[nxt]:
                                bits |= closure[nxt]
                    for member in members:
                        closure[member] = bits
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
        return {name: closure[i] for i, name in enumerate(order)}

    def _search(self, module: str) -> tuple[dict[str, tuple[str, str] | str], deque]:
        known = self._memo.get(module)
        if known is None:
            queue: deque[tuple[str, tuple[str, str] | str]] = deque([(module, IMPORTED)])
            parts = module.split(".")
            for cut in range(1, len(parts)):  # a module's parent packages run first
                queue.append((".".join(parts[:cut]), IMPORTED))
            known = self._memo[module] = ({}, queue)
        return known

    def _step(self, why: dict[str, tuple[str, str] | str], queue: deque, module: str) -> None:
        current, reason = queue.popleft()
        if current in why or current not in self.modules and current != module:
            return
        why[current] = reason
        for target, registry in self._edges.get(current, ()):
            if target in why:
                continue
            if registry is None:
                queue.appendleft((target, reason))
            else:
                queue.append((target, registry))
