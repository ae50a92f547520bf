"""Analysis limits hit while analysing one function, as the user will be told them.

Every cap or give-up in the analysis is reported, never silent. Most limits are told
whenever they are hit; a few can only make a finding through their own function wrong
(a marker check left unevaluated refines its branch as if there were no check), and a
notice about code with no finding warns of nothing, so those are told only when a
finding is reported through that function (``ProjectAnalysis.limits_told``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    """One limit hit: ``text`` is the notice; ``if_reported``: told only when a finding's
    site or trace step lies in the function that hit it."""

    text: str
    if_reported: bool = False
