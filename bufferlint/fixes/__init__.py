"""Mechanical repairs for findings (``bufferlint check --fix``).

``base`` plans one fix with LibCST (``plan_fix``), ``bl001``/``bl002``/``bl003`` are the fixers,
``apply`` edits text and writes files atomically, and ``runner`` attaches fixes to findings
and applies them with re-analysis (what ``bufferlint.api`` calls).
"""
