"""Which queued function to analyse first: a callee before its callers, by the names called.

Why: a caller analysed before a project function it calls sees that function's empty
summary, and is analysed again once the callee has one (``Program.solve`` re-queues the
readers of a changed summary). On sglang 0.5.23 most re-analyses were of that kind, and in
more than half of them the callee was already waiting in the queue when its caller ran.
Before its first analysis a function's callees are not known (``Outcome.callees`` comes
from analysing it), but the names it calls are in its text: following them from the head
of the queue to a queued function of that name, and on from there, reaches a function
that calls nothing queued (or closes a cycle), which is analysed first.

The names are matched loosely (``self.load(...)`` names every queued ``load``): the order
only decides when a queued function runs, never whether, so a wrong guess costs one
analysis at most, as the plain queue order would.
"""

from __future__ import annotations

import ast
from collections import deque

from bufferlint.analysis.frontend.index import FunctionInfo

# Methods a call names by their class (``Loader(...)`` runs ``Loader.__init__``).
_CALLED_BY_CLASS = frozenset({"__init__", "__post_init__", "__new__"})


def called_words(info: FunctionInfo) -> tuple[str, ...]:
    """The names this function's calls end with (``f``, ``obj.f``, ``a.b.f``), in the order
    written; none for a module's top level (it calls everything it sets up)."""
    if info.kind == "module":
        return ()
    words: dict[str, None] = {}
    for node in ast.walk(info.node):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                words[func.id] = None
            elif isinstance(func, ast.Attribute):
                words[func.attr] = None
    return tuple(words)


def name_keys(info: FunctionInfo) -> tuple[str, ...]:
    """The names a call may use to run this function: its own, and its class's for a
    constructor's methods."""
    short = info.qualname.rsplit(".", 1)[-1]
    if short in _CALLED_BY_CLASS and info.class_qualname:
        return short, info.class_qualname.rsplit(".", 1)[-1]
    return (short,)


class CalleesFirst:
    """The queue's functions by the names that call them, to pick a callee of the queue's
    head that is queued too (``pick``). Entries are never removed: a function found here
    that is no longer queued is skipped."""

    def __init__(self) -> None:
        self._by_name: dict[str, dict[str, None]] = {}  # name -> queued functions (an ordered set)
        self._words: dict[str, tuple[str, ...]] = {}

    def add(self, info: FunctionInfo) -> None:
        for key in name_keys(info):
            self._by_name.setdefault(key, {})[info.qualname] = None

    def pick(self, queue: deque[str], queued: set[str], functions: dict[str, FunctionInfo]) -> str:
        """The function to analyse next, taken out of ``queue``: from its head, a queued
        function that head calls, then one that function calls, ... until one calls nothing
        queued that was not met on the way."""
        chosen = queue[0]
        met = {chosen}
        while True:
            callee = self._queued_callee(chosen, met, queued, functions)
            if callee is None:
                break
            met.add(callee)
            chosen = callee
        if chosen == queue[0]:
            queue.popleft()
        else:
            queue.remove(chosen)
        return chosen

    def _queued_callee(self, caller: str, met: set[str], queued: set[str],
                       functions: dict[str, FunctionInfo]) -> str | None:
        words = self._words.get(caller)
        if words is None:
            info = functions.get(caller)
            words = self._words[caller] = called_words(info) if info is not None else ()
        for word in words:
            named = self._by_name.get(word)
            if not named:
                continue
            for qualname in [q for q in named if q not in queued]:
                del named[qualname]  # analysed since (queued again: added again)
            for qualname in named:
                if qualname not in met:
                    return qualname
        return None
