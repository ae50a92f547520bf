"""docs/architecture.md keeps up with the package: every module under bufferlint/ has its
paragraph in "The modules" (a package by its folder, ``analysis/flow/``), and every module
named there exists. A module added without a paragraph, or one renamed or removed, fails here."""

from __future__ import annotations

import re

from conftest import REPO

DOC = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "bufferlint"


def package_modules() -> set[str]:
    """Each module by its path under bufferlint/; a package's ``__init__.py`` by its folder."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.endswith("/__init__.py"):
            relative = relative.removesuffix("__init__.py")
        names.add(relative)
    return names


def documented_modules() -> list[str]:
    """The names opening the list items of the doc's "## The modules" section."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## The modules\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `([\w/.]+)`:", section, re.MULTILINE)


def test_every_module_has_a_paragraph() -> None:
    missing = sorted(package_modules() - set(documented_modules()))
    assert not missing, f"docs/architecture.md, The modules: no paragraph for {missing}"


def test_every_paragraph_names_a_module_once() -> None:
    documented = documented_modules()
    assert len(documented) == len(set(documented)), "a module has two paragraphs"
    gone = sorted(set(documented) - package_modules())
    assert not gone, f"docs/architecture.md, The modules: no such module under bufferlint/: {gone}"


def test_the_glossary_defines_the_engines_words() -> None:
    text = DOC.read_text(encoding="utf-8")
    glossary = text.split("\n## Glossary\n", 1)[1].split("\n## ", 1)[0]
    defined = set(re.findall(r"^- \*\*([\w ,-]+)\*\*", glossary, re.MULTILINE))
    words = {"hot", "flight_hot", "sited", "stand-in", "reach", "landed", "refilled", "stale", "advances",
             "demands", "consider", "hazard", "users_word", "pending", "widened"}
    assert words <= {word for entry in defined for word in re.split(r", ", entry)}, words - defined
