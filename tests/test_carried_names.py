"""Which names a loop body carries from one iteration to the next (``carried_names``): read on
some path from the top of the body before the body binds them. What they hold outlives its
iteration (BL003 at the store); names bound anew before any read die with it."""

from __future__ import annotations

import ast
import textwrap

import pytest

from bufferlint.analysis.frontend.syntax import carried_names


def carried(source: str) -> set[str]:
    loop = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(loop, (ast.For, ast.While))
    return carried_names(loop)


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("for w in ws:\n    batch.append(w)\n    if full(batch):\n        batch = []\n", {"batch"}),
        ("for w in ws:\n    batch = []\n    batch.append(w)\n", set()),
        ("for w in ws:\n    if p(w):\n        use(prev)\n    prev = w\n", {"prev"}),
        ("for w in ws:\n    kept = kept + [w]\n", {"kept"}),
        ("for w in ws:\n    w = w.float()\n", set()),  # the loop's target is bound afresh
        ("for w in ws:\n    if p(w):\n        x = 1\n    else:\n        x = 2\n    use(x)\n", set()),
        ("for w in ws:\n    if p(w):\n        x = 1\n    use(x)\n", {"x"}),  # bound on one path only
        ("for w in ws:\n    if p(w):\n        continue\n    use(x)\n    x = w\n", {"x"}),
        ("for w in ws:\n    if p(w):\n        x = w\n    else:\n        continue\n    use(x)\n", set()),
        # a handler that leaves the loop: after the try, only the body's end goes on
        ("while True:\n    try:\n        n, w = next(it)\n    except StopIteration:\n        break\n    use(n, w)\n",
         set()),
        ("for w in ws:\n    try:\n        s = w.view(-1)\n    finally:\n        use(s)\n", set()),
        ("for w in ws:\n    parts = [p for p in w.chunk(2)]\n    use(parts)\n", set()),  # p is the comprehension's
        ("for w in ws:\n    f = lambda: later\n    later = w\n", set()),  # a lambda reads when called
        ("for w in ws:\n    total += w\n", set()),  # updated in place: not rebound by the body
    ],
)
def test_carried_names(source: str, names: set[str]) -> None:
    assert carried(source) == names
