"""The control-flow graph (``flow/cfg.py``) of small functions, as ``cfg.dump`` prints it: the
blocks in id order with their operations (kind, line, what is evaluated) and their out-edges
(``-> 9 if x``). A change to the builder shows up here as a changed snapshot, with the shape it
concerns, not as a finding that moved in a fixture far away.

Each snapshot was read against the source: the comments say what it shows."""

from __future__ import annotations

import ast
import textwrap

import pytest

from bufferlint.analysis.flow import cfg

CASES = {
    # Each way out of the try runs its own copy of the finally body: the break (block 10, then the
    # loop's exit), the handler's return (13, before the function's exit) and the normal end (14,
    # then the loop's advance). Every statement in the try gets an exception edge to the handlers'
    # entry (6).
    "try_except_finally_with_break_and_return": (
        """
def f(items, pool):
    for x in items:
        try:
            if x:
                break
            pool.submit(x)
        except ValueError as e:
            return e
        finally:
            pool.flush()
    return None
""",
        """\
entry 0
0:
  iter L3 for x in items
  -> 1
1:
  -> 2
  -> 3
2:
  bind L3 for x in items
  -> 7
3:
  exhausted L3 for x in items
  loop_exit L3 for x in items
  -> 4
4:
  return L12 return None
  exit L12 return None
5:
  advance L3 for x in items
  -> 1
6:
  -> 13
7:
  test L5 x
  -> 6
  -> 9 if x
  -> 11 if not x
8:
  -> 12
9:
  -> 10
10:
  stmt L11 pool.flush()
  loop_exit L3 for x in items
  -> 6
  -> 4
11:
  -> 8
12:
  stmt L7 pool.submit(x)
  -> 6
  -> 14
13:
  handler L8 except ValueError as e
  return L9 return e
  stmt L11 pool.flush()
  exit L9 return e
14:
  stmt L11 pool.flush()
  -> 5
""",
    ),
    # Exits run innermost first on every way out: the normal end (1) and the return (2). Outside a
    # try no exception edges are made: an exception leaving the function commits nothing.
    "nested_with": (
        """
def f(pool, lock):
    with pool as p, lock:
        with open("f") as g:
            if g:
                return p
            p.submit(g)
    done()
""",
        """\
entry 0
0:
  with_enter L3 with pool as p
  with_enter L3 with lock
  with_enter L4 with open('f') as g
  test L5 g
  -> 2 if g
  -> 3 if not g
1:
  stmt L7 p.submit(g)
  with_exit L4 with open('f') as g
  with_exit L3 with lock
  with_exit L3 with pool as p
  stmt L8 done()
  exit L2 def f
2:
  return L6 return p
  with_exit L4 with open('f') as g
  with_exit L3 with lock
  with_exit L3 with pool as p
  exit L6 return p
3:
  -> 1
""",
    ),
    # The else body runs only on the exhausted edge (3); the break leaves through a loop exit of
    # its own (6) straight to after the loop (4).
    "for_else": (
        """
def f(items):
    for x in items:
        if x:
            break
        use(x)
    else:
        nothing()
    after()
""",
        """\
entry 0
0:
  iter L3 for x in items
  -> 1
1:
  -> 2
  -> 3
2:
  bind L3 for x in items
  test L4 x
  -> 6 if x
  -> 7 if not x
3:
  exhausted L3 for x in items
  loop_exit L3 for x in items
  stmt L8 nothing()
  -> 4
4:
  stmt L9 after()
  exit L2 def f
5:
  stmt L6 use(x)
  advance L3 for x in items
  -> 1
6:
  loop_exit L3 for x in items
  -> 4
7:
  -> 5
""",
    ),
    # The builder keeps the false edge of `while True` (3); the test's refinement decides it.
    # `continue` (9) advances and goes back to the head like the body's end (8).
    "while_true": (
        """
def f(queue):
    while True:
        item = queue.get()
        if item is None:
            break
        if item:
            continue
        use(item)
    return item
""",
        """\
entry 0
0:
  -> 1
1:
  test L3 True
  -> 2 if True
  -> 3 if not True
2:
  stmt L4 item = queue.get()
  test L5 item is None
  -> 6 if item is None
  -> 7 if not (item is None)
3:
  exhausted L3 while True
  loop_exit L3 while True
  -> 4
4:
  return L10 return item
  exit L10 return item
5:
  test L7 item
  -> 9 if item
  -> 10 if not item
6:
  loop_exit L3 while True
  -> 4
7:
  -> 5
8:
  stmt L9 use(item)
  advance L3 while True
  -> 1
9:
  advance L3 while True
  -> 1
10:
  -> 8
""",
    ),
    # Each case binds on the body's path only; the next case starts from the state before the
    # binding, also after `case _`. A guard is a test after the binding.
    "match": (
        """
def f(command):
    match command:
        case ("go", target) if target:
            go(target)
        case {"stop": _}:
            stop()
        case _:
            pass
""",
        """\
entry 0
0:
  stmt L3 command
  match_case L4 case ['go', target]
  test L4 target
  -> 2 if target
  -> 3 if not target
1:
  exit L2 def f
2:
  stmt L5 go(target)
  -> 1
3:
  match_case L6 case {'stop': _}
  -> 4
  -> 5
4:
  stmt L7 stop()
  -> 1
5:
  match_case L8 case _
  -> 6
  -> 7
6:
  stmt L9 pass
  -> 1
7:
  -> 1
""",
    ),
    # Comprehensions are loops inside expressions: the graph has one operation for each statement
    # holding one, and the interpreter runs their loops.
    "comprehensions": (
        """
def f(items, pool):
    futures = [pool.submit(x) for x in items if x]
    return {k: v for k, v in zip(items, futures)}
""",
        """\
entry 0
0:
  stmt L3 futures = [pool.submit(x) for x in items if x]
  return L4 return {k: v for k, v in zip(items, futures)}
  exit L4 return {k: v for k, v in zip(items, futures)}
""",
    ),
    # Inside a try, an exception in the with body runs the with exit (5) before the handler (2,
    # 6).
    "with_in_try": (
        """
def f(pool):
    try:
        with pool as p:
            p.submit(1)
    except OSError:
        return None
    return p
""",
        """\
entry 0
0:
  -> 3
1:
  return L8 return p
  exit L8 return p
2:
  -> 6
3:
  with_enter L4 with pool as p
  -> 2
  -> 4
4:
  stmt L5 p.submit(1)
  with_exit L4 with pool as p
  -> 5
  -> 1
5:
  with_exit L4 with pool as p
  -> 2
6:
  handler L6 except OSError
  return L7 return None
  exit L7 return None
""",
    ),
}


def graph_text(source: str) -> str:
    function = ast.parse(textwrap.dedent(source)).body[0]
    return cfg.dump(cfg.build(function))


@pytest.mark.parametrize("name", CASES)
def test_graph_snapshot(name: str) -> None:
    source, expected = CASES[name]
    assert graph_text(source) == expected


def test_blocks_no_path_reaches_are_marked() -> None:
    # Both branches return: the block after the if (1) still gets the code after it, which the
    # worklist never visits (no path from the entry reaches it).
    assert graph_text("""\
def f(x):
    if x:
        return 1
    else:
        return 2
    unreachable()
""") == """\
entry 0
0:
  test L2 x
  -> 2 if x
  -> 3 if not x
1:  (unreachable)
  stmt L6 unreachable()
  exit L1 def f
2:
  return L3 return 1
  exit L3 return 1
3:
  return L5 return 2
  exit L5 return 2
"""


def test_every_op_kind_is_described() -> None:
    kinds = {value for name, value in vars(cfg).items() if name.isupper() and isinstance(value, str)}
    shown = {line.split()[0] for _, expected in CASES.values() for line in expected.splitlines() if line.startswith("  ") and not line.startswith("  ->")}
    assert kinds - shown == {"raise"}, f"op kinds no snapshot shows: {sorted(kinds - shown)}"

