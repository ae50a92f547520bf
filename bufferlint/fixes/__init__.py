"""Mechanical repairs for findings (``bufferlint check --fix``).

``base`` is what the fixers share (LibCST), ``bl001``/``bl002``/``bl003``/``bl005`` are the fixers,
``planners`` finds a finding's fixer by its rule and plans one fix (``plan_fix``),
``apply`` edits text and writes files atomically, and ``runner`` attaches fixes to findings
and applies them with re-analysis (what ``bufferlint.api`` calls).
"""
