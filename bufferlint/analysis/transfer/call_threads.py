"""Threads a project class starts: an instance of a ``threading.Thread`` subclass with its
own ``run`` reads, on its own thread once started, what its constructor was given (the
fields ``__init__`` keeps it in). Its construction is the hand-off, as the stdlib pack's
``Thread(target=fn, args=(w,))`` is: the arguments are pending until the object's
``join()`` (a settler) or until the producer advances (reported at the construction). What
``__init__`` keeps of them is the thread's to read, the same bug, not a store past the
step: the constructor is analysed without their borrowed objects."""

from __future__ import annotations

from bufferlint.analysis.domain.values import Value, deep_leaves, has_leaves, join_all, map_leaves
from bufferlint.analysis.transfer.call_effects import Submit
from bufferlint.analysis.transfer.call_site import CallSite
from bufferlint.hazards import Hazard

# The library classes whose ``start()`` runs the instance's ``run()`` on a new thread.
THREAD_CLASSES = frozenset({"threading.Thread"})


def starts_thread(call: CallSite) -> bool:
    """Does the call build an instance of a project subclass of ``threading.Thread`` that
    defines ``run`` itself (or in a project base): what it is given is read by that thread?"""
    qualname = call.constructed
    if qualname is None:
        return False
    index = call.program.index
    if THREAD_CLASSES.isdisjoint(index.canonical(name) for name in index.class_ancestors(qualname)):
        return False
    run = index.class_method(qualname, "run")
    return run is not None and run in index.functions


def hand_to_thread(call: CallSite) -> frozenset:
    """The construction hands its arguments to the thread: a submission whose handle is the
    new object (its key, for the value the call gives), nothing when it is given nothing
    borrowed."""
    payload = join_all(call.args.flat())
    if not has_leaves(payload):
        return frozenset()
    subject = call.subject(frozenset(deep_leaves(payload)))
    call.effects.append(Submit(call.node, payload, call.name, frozenset(), subject, Hazard.ASYNC_READ_AFTER_ADVANCE,
                               frozenset()))
    return frozenset({(call.node.lineno, call.node.col_offset)})


def kept_by_thread(value: Value) -> Value:
    """An argument as the thread's constructor sees it: its objects are the thread's to
    read (reported at the hand-off), so none flows into what ``__init__`` keeps."""
    return map_leaves(value, lambda leaf: None)
