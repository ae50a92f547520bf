"""Output formats, by the name ``--format`` takes. A new format (sarif, github, rdjson) is a
module with a ``render`` function matching ``Reporter``, registered here."""

from __future__ import annotations

from bufferlint.reporters import json, text
from bufferlint.reporters.base import Reporter

REPORTERS: dict[str, Reporter] = {
    "text": text.render,
    "json": json.render,
}
