"""A control-flow graph of one function, built once from its syntax tree (pyright's binder is
the model): basic blocks of operations, joined by edges that may carry the truth of a test.

What the graph makes explicit, so the transfer functions never re-walk a function's
statements (expressions, comprehensions among them, are evaluated from their syntax):

* branch and loop labels (``if``/``while``/``for``/``match``; loop heads with a separate
  "exhausted" edge (a ``while`` loop's: its test false) and an "advance" step on every back edge);
* ``break``/``continue``/``return`` that unwind through ``finally`` bodies and ``with`` exits
  (each unwinding path gets its own copy of the ``finally`` body, as CPython compiles it);
* exception edges: every statement inside a ``try`` gets a block whose state may flow to the
  handlers (or to the ``finally`` copy for exceptions, then to the outer handler);
* context-manager exits on every way out of a ``with`` block (normal, jumps, exceptions).

Comprehensions are their own loops, but inside expressions; the interpreter runs them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Operation kinds. Each carries the syntax node it comes from.
STMT = "stmt"  # a simple statement (assignment, expression, import, def, ...)
TEST = "test"  # evaluate a branch condition; the out-edges refine on its truth
ITER = "iter"  # evaluate a for loop's iterable once, before the loop
BIND = "bind"  # bind a for loop's target to the next element (``extra``: see ``called_each_round``)
ADVANCE = "advance"  # the back edge of a loop: the producer may advance
EXHAUSTED = "exhausted"  # a for loop's iterator ran out, a while loop's test is false (what each iteration settled is settled)
LOOP_EXIT = "loop_exit"  # leaving a loop by any exit (values kept from its iterations go stale)
WITH_ENTER = "with_enter"  # evaluate a with item (``extra``: its index) and bind its target
WITH_EXIT = "with_exit"  # the context manager's ``__exit__`` (an executor waits for its tasks)
RETURN = "return"  # evaluate a returned value
EXIT = "exit"  # the function ends here (after every finally on the way): commit pending work
RAISE = "raise"  # evaluate the raised exception
HANDLER = "handler"  # bind ``except ... as name``
MATCH_CASE = "match_case"  # bind a case pattern against the subject (``extra``: the subject node)


@dataclass
class Op:
    kind: str
    node: ast.AST
    extra: object = None
    loops: tuple = ()  # enclosing loop statements, innermost last
    withs: tuple = ()  # enclosing (with statement, item index) pairs, innermost last


@dataclass
class Edge:
    target: int
    test: ast.expr | None = None  # refine the state on this test's truth
    truth: bool = True
    # A match case's two ways on: into its body (``truth``) or on to the next case (not):
    # what the pattern (and its guard) tells about the subject is known on each
    case: ast.match_case | None = None
    # The way out of a statement in a try when it raises (``split_for_exceptions``): the
    # state after it, but for a wait that raises when its timeout passes first (``Settle.timed``)
    raised: bool = False


@dataclass
class Block:
    id: int
    ops: list[Op] = field(default_factory=list)
    succs: list[Edge] = field(default_factory=list)


@dataclass
class Graph:
    blocks: list[Block]
    entry: int
    order: dict[int, int]  # block id -> reverse postorder position (worklist priority)


@dataclass
class _Frame:
    """One level of the enclosing structure that a jump or an exception must unwind."""

    kind: str  # "loop", "finally", "with", "try"
    node: ast.AST
    loop_head: int | None = None
    loop_after: int | None = None
    finalbody: list | None = None
    with_item: int | None = None
    exc_target: int | None = None  # where exceptions raised inside go (try: handlers)


class _Builder:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.frames: list[_Frame] = []
        self.current: int | None = None

    # -- blocks and edges ------------------------------------------------------------

    def new_block(self) -> int:
        block = Block(len(self.blocks))
        self.blocks.append(block)
        return block.id

    def edge(
        self, source: int | None, target: int, test: ast.expr | None = None, truth: bool = True,
        case: ast.match_case | None = None,
    ) -> None:
        if source is not None:
            self.blocks[source].succs.append(Edge(target, test, truth, case))

    def start(self, block: int | None) -> None:
        self.current = block

    def emit(self, kind: str, node: ast.AST, extra: object = None) -> None:
        if self.current is None:
            return  # unreachable code after a jump
        loops = tuple(f.node for f in self.frames if f.kind == "loop")
        withs = tuple((f.node, f.with_item) for f in self.frames if f.kind == "with")
        self.blocks[self.current].ops.append(Op(kind, node, extra, loops, withs))

    def in_try(self) -> bool:
        """Exceptions matter only where a handler can catch them and go on."""
        return any(f.kind == "try" for f in self.frames)

    def split_for_exceptions(self) -> None:
        """Inside a try, each statement gets a block of its own whose state after it flows to
        the handler too: an exception raised by the next statement leaves that state. After,
        not before: ``future.result()`` that raises has waited for the task first, and a
        statement that raises before its effects is approximated by its effects."""
        if self.current is None or not self.in_try():
            return
        block = self.new_block()
        self.edge(self.current, block)
        self.current = block
        self.blocks[block].succs.append(Edge(self.exception_target(), raised=True))

    def exception_target(self) -> int:
        """The block an exception raised here unwinds to: the innermost handler, through
        the ``finally`` copies and ``with`` exits on the way (one copy per frame)."""
        for depth in range(len(self.frames) - 1, -1, -1):
            frame = self.frames[depth]
            if frame.kind == "try":
                assert frame.exc_target is not None  # a try frame is made with its handlers' block
                return frame.exc_target
            if frame.kind in ("finally", "with"):
                if frame.exc_target is None:
                    frame.exc_target = self._exceptional_unwind(depth)
                return frame.exc_target
        return self.new_block()  # the exception leaves the function: nothing is committed

    def _exceptional_unwind(self, depth: int) -> int:
        """A block running this frame's cleanup for an exception, then re-raising outward."""
        frame = self.frames[depth]
        saved_frames, saved_current = self.frames, self.current
        self.frames = self.frames[:depth]
        entry = self.new_block()
        self.current = entry
        if frame.kind == "with":
            self.emit(WITH_EXIT, frame.node, frame.with_item)
        else:
            self.block(frame.finalbody or [])
        if self.current is not None:
            self.edge(self.current, self.exception_target())
        self.frames, self.current = saved_frames, saved_current
        return entry

    # -- statements ------------------------------------------------------------------

    def block(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if self.current is None:
                return
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        self.split_for_exceptions()
        method = getattr(self, "stmt_" + type(stmt).__name__, None)
        if method is not None:
            method(stmt)
        else:
            self.emit(STMT, stmt)

    def stmt_If(self, stmt: ast.If) -> None:
        # An elif chain is walked iteratively: generated dispatch code nests a thousand deep.
        after = self.new_block()
        node: ast.stmt | None = stmt
        while isinstance(node, ast.If):
            self.emit(TEST, node.test)
            test_block = self.current
            then = self.new_block()
            self.edge(test_block, then, node.test, True)
            self.start(then)
            self.block(node.body)
            self.edge(self.current, after)
            orelse = self.new_block()
            self.edge(test_block, orelse, node.test, False)
            self.start(orelse)
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                node = node.orelse[0]
                self.split_for_exceptions()
                continue
            self.block(node.orelse)
            node = None
        self.edge(self.current, after)
        self.start(after)

    def stmt_While(self, stmt: ast.While) -> None:
        head = self.new_block()
        self.edge(self.current, head)
        self.start(head)
        self.emit(TEST, stmt.test)
        body, orelse, after = self.new_block(), self.new_block(), self.new_block()
        self.edge(head, body, stmt.test, True)
        self.edge(head, orelse, stmt.test, False)
        self.loop_body(stmt, head, body, after)
        self.start(orelse)
        self.emit(EXHAUSTED, stmt)
        self.emit(LOOP_EXIT, stmt)
        self.block(stmt.orelse)
        self.edge(self.current, after)
        self.start(after)

    def stmt_For(self, stmt: ast.For | ast.AsyncFor) -> None:
        self.emit(ITER, stmt)
        head = self.new_block()
        self.edge(self.current, head)
        body, orelse, after = self.new_block(), self.new_block(), self.new_block()
        self.edge(head, body)
        self.edge(head, orelse)
        self.loop_body(stmt, head, body, after, bind=called_each_round(stmt) or True)
        self.start(orelse)
        self.emit(EXHAUSTED, stmt)
        self.emit(LOOP_EXIT, stmt)
        self.block(stmt.orelse)
        self.edge(self.current, after)
        self.start(after)

    stmt_AsyncFor = stmt_For

    def loop_body(self, stmt: ast.For | ast.AsyncFor | ast.While, head: int, body: int, after: int,
                  bind: bool | ast.Call = False) -> None:
        self.frames.append(_Frame("loop", stmt, loop_head=head, loop_after=after))
        self.start(body)
        if bind:
            self.emit(BIND, stmt, bind if isinstance(bind, ast.Call) else None)
        self.block(stmt.body)
        self.emit(ADVANCE, stmt)
        self.edge(self.current, head)
        self.frames.pop()

    def stmt_Break(self, stmt: ast.Break) -> None:
        self.jump(stmt, "break")

    def stmt_Continue(self, stmt: ast.Continue) -> None:
        self.jump(stmt, "continue")

    def stmt_Return(self, stmt: ast.Return) -> None:
        self.emit(RETURN, stmt)
        self.jump(stmt, "return")

    def jump(self, stmt: ast.stmt, kind: str) -> None:
        """Unwind the frames between here and the jump's target, running each ``finally``
        body and ``with`` exit on the way (a copy per path)."""
        saved = self.frames
        depth = len(self.frames)
        while depth > 0:
            frame = self.frames[depth - 1]
            if frame.kind == "loop" and kind != "return":
                assert frame.loop_head is not None and frame.loop_after is not None  # set for every loop
                self.frames = saved[:depth]
                if kind == "continue":
                    self.emit(ADVANCE, frame.node)
                    self.edge(self.current, frame.loop_head)
                else:
                    self.emit(LOOP_EXIT, frame.node)
                    self.edge(self.current, frame.loop_after)
                self.frames = saved
                self.start(None)
                return
            self.frames = saved[: depth - 1]
            if frame.kind == "finally":
                self.block(frame.finalbody or [])
            elif frame.kind == "with":
                self.emit(WITH_EXIT, frame.node, frame.with_item)
            depth -= 1
        self.frames = saved
        if kind == "return":
            self.emit(EXIT, stmt)
        self.start(None)

    def stmt_Raise(self, stmt: ast.Raise) -> None:
        self.emit(RAISE, stmt)
        if self.current is not None and self.in_try():
            self.edge(self.current, self.exception_target())
        self.start(None)

    def stmt_With(self, stmt: ast.With | ast.AsyncWith) -> None:
        depth = len(self.frames)
        for i in range(len(stmt.items)):
            self.emit(WITH_ENTER, stmt, i)
            self.frames.append(_Frame("with", stmt, with_item=i))
        self.block(stmt.body)
        while len(self.frames) > depth:
            frame = self.frames.pop()
            self.emit(WITH_EXIT, stmt, frame.with_item)

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, stmt: ast.Try) -> None:
        after = self.new_block()
        finally_frame = None
        if stmt.finalbody:
            finally_frame = _Frame("finally", stmt, finalbody=stmt.finalbody)
            self.frames.append(finally_frame)
        handlers_entry = None
        if stmt.handlers:
            handlers_entry = self.new_block()
            self.frames.append(_Frame("try", stmt, exc_target=handlers_entry))
        self.block(stmt.body)
        if stmt.handlers:
            self.frames.pop()  # the else clause and the handlers are outside the handled region
        self.block(stmt.orelse)
        normal_ends = [self.current]
        if handlers_entry is not None:
            for handler in stmt.handlers:
                block = self.new_block()
                self.edge(handlers_entry, block)
                self.start(block)
                self.split_for_exceptions()
                self.emit(HANDLER, handler)
                self.block(handler.body)
                normal_ends.append(self.current)
            # An exception no handler matches goes on outward.
            if self.in_try():
                self.edge(handlers_entry, self.exception_target())
        if finally_frame is not None:
            self.frames.pop()
            join = self.new_block()
            for end in normal_ends:
                self.edge(end, join)
            self.start(join)
            self.block(stmt.finalbody)
            self.edge(self.current, after)
        else:
            for end in normal_ends:
                self.edge(end, after)
        self.start(after)

    stmt_TryStar = stmt_Try

    def stmt_Match(self, stmt: ast.Match) -> None:
        self.emit(STMT, stmt.subject)  # evaluate the subject for its effects
        after = self.new_block()
        for case in stmt.cases:
            self.emit(MATCH_CASE, case, stmt.subject)
            if case.guard is not None:
                self.emit(TEST, case.guard)
            test_block = self.current
            body, rest = self.new_block(), self.new_block()
            self.edge(test_block, body, case.guard, True, case)
            # Without a guard the case may still not match (the next case gets the state
            # from before the binding): the pattern binds only on the body's path.
            self.edge(test_block, rest, case.guard, False, case)
            self.start(body)
            self.block(case.body)
            self.edge(self.current, after)
            self.start(rest)
        self.edge(self.current, after)
        self.start(after)


def build(node: ast.AST) -> Graph:
    """The graph of a function (or a module's top level)."""
    builder = _Builder()
    entry = builder.new_block()
    builder.start(entry)
    if isinstance(node, ast.Lambda):  # its expression is what it returns
        body: list = [ast.copy_location(ast.Return(value=node.body), node.body)]
    else:
        body = node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) else []
    builder.block(body)
    if builder.current is not None:
        builder.emit(EXIT, node)
    return Graph(builder.blocks, entry, _reverse_postorder(builder.blocks, entry))


def dump(graph: Graph) -> str:
    """The graph as text, one block after another in id order: its operations (kind, line,
    what it evaluates) and its out-edges (``-> 3 if x``, ``-> 4 if not x``). Blocks no path
    from the entry reaches say so. For tests and debugging: a change to the builder shows up
    as a changed snapshot (tests/test_cfg.py), not as a changed finding far away."""
    lines = [f"entry {graph.entry}"]
    for block in graph.blocks:
        reached = "" if block.id in graph.order else "  (unreachable)"
        lines.append(f"{block.id}:{reached}")
        lines += [f"  {op.kind} {_describe(op)}" for op in block.ops]
        lines += [f"  -> {edge.target}{_condition(edge)}" for edge in block.succs]
    return "\n".join(lines) + "\n"


def _condition(edge: Edge) -> str:
    if edge.test is None:
        return ""
    test = ast.unparse(edge.test)
    if edge.truth:
        return f" if {test}"
    return f" if not ({test})" if " " in test else f" if not {test}"


def _describe(op: Op) -> str:
    """``L<line> <source>`` of what the operation evaluates (a loop's or with's header only)."""
    node = op.node
    if isinstance(node, (ast.For, ast.AsyncFor)):
        text = f"for {ast.unparse(node.target)} in {ast.unparse(node.iter)}"
    elif isinstance(node, ast.While):
        text = f"while {ast.unparse(node.test)}"
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        text = f"with {ast.unparse(node.items[op.extra])}" if isinstance(op.extra, int) else "with"
    elif isinstance(node, ast.ExceptHandler):
        text = "except" + (f" {ast.unparse(node.type)}" if node.type else "") + (f" as {node.name}" if node.name else "")
    elif isinstance(node, ast.match_case):
        text = f"case {ast.unparse(node.pattern)}"
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        text = f"def {node.name}"
    elif isinstance(node, ast.Module):
        text = "module"
    else:
        text = ast.unparse(node).split("\n", 1)[0]
    line = getattr(node.pattern if isinstance(node, ast.match_case) else node, "lineno", None)
    return f"L{line} {text}" if line is not None else text


def _reverse_postorder(blocks: list[Block], entry: int) -> dict[int, int]:
    """Iterative DFS (graphs can be thousands of blocks deep)."""
    seen = {entry}
    post: list[int] = []
    stack = [(entry, iter(blocks[entry].succs))]
    while stack:
        block, succs = stack[-1]
        for edge in succs:
            if edge.target not in seen:
                seen.add(edge.target)
                stack.append((edge.target, iter(blocks[edge.target].succs)))
                break
        else:
            stack.pop()
            post.append(block)
    return {block: i for i, block in enumerate(reversed(post))}


def called_each_round(stmt: ast.For | ast.AsyncFor) -> ast.Call | None:
    """``for x in iter(fn, sentinel)``: each round calls ``fn()`` and binds what it returns
    (until it returns the sentinel), as ``while (x := fn()) != sentinel`` would; the call
    ``fn()``, built once here so that its node is the same on every visit, for the interpreter
    to run at the bind (when ``iter`` is the builtin)."""
    it = stmt.iter
    if isinstance(stmt, ast.AsyncFor) or not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                                              and it.func.id == "iter" and len(it.args) == 2 and not it.keywords):
        return None
    if any(isinstance(a, ast.Starred) for a in it.args):
        return None
    # placed at the loop's target, where no other call starts (sites are keyed by position)
    return ast.copy_location(ast.Call(func=it.args[0], args=[], keywords=[]), stmt.target)
