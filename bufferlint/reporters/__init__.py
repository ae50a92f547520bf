"""Output formats, by the name ``--output-format`` takes. A new format is a module with a
``render`` function matching ``Reporter``, registered here (and in config.OUTPUT_FORMATS)."""

from __future__ import annotations

from bufferlint.reporters import github, json, rdjson, sarif, text
from bufferlint.reporters.base import Reporter

REPORTERS: dict[str, Reporter] = {
    "full": text.render,
    "concise": text.render_concise,
    "json": json.render,
    "sarif": sarif.render,
    "github": github.render,
    "rdjson": rdjson.render,
    "rdjsonl": rdjson.render_lines,
}
