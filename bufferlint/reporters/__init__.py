"""Output formats, by the name ``--format`` takes. A new format is a module with a
``render`` function matching ``Reporter``, registered here."""

from __future__ import annotations

from bufferlint.reporters import github, json, rdjson, sarif, text
from bufferlint.reporters.base import Reporter

REPORTERS: dict[str, Reporter] = {
    "text": text.render,
    "json": json.render,
    "sarif": sarif.render,
    "github": github.render,
    "rdjson": rdjson.render,
    "rdjsonl": rdjson.render_lines,
}
