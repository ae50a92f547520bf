"""The cache's differential tester: random seeded edits of a project, each followed by a warm
(cached) run and a ``--no-cache`` run whose JSON reports and exit codes must be the same.

Used by ``test_cache_fuzz.py`` (the fast form, over small projects of the fixture corpus)
and ``scripts/cache_fuzz.py`` (the long form, over a real tree). The edits are the ones
people make between two runs (``EDITS``): comment and blank lines, reformatting, renames,
helpers and methods added or removed, functions moved, imports, the configuration and a
project rule pack, files deleted and added, same-size edits with the modification time put
back, ``git checkout`` of an earlier revision, two runs at once, a run killed part way.
An edit that does not apply to the project as it is (no class to add a method to) is drawn
again. Edits need not keep the code valid or meaningful: any text a user can save is a case.

Runs are in process (``cli.main``, as a command run does) except where a process is the
point (concurrent and killed runs); a comparison of such runs is with a ``--no-cache`` run of
the same kind, so that both see one hash seed. The cold run uses one process (``--jobs 1``);
half the warm runs, drawn by a generator of their own (so a seed's edits stay what they
were), use two with worker processes however small the project (``parallel_runs``): what a
parallel run stores, a later run reuses.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bufferlint import cli
from bufferlint.analysis.frontend import syntax_check
from bufferlint.fixes import runner

REPO = Path(__file__).resolve().parent.parent
SKIP = {".bufferlint_cache", ".git", "__pycache__"}
FIXTURES = REPO / "tests" / "fixtures"
Edit = Callable[["Project", random.Random], "str | None"]


@dataclass
class Divergence:
    seed: int
    step: int
    edits: list[str]
    args: list[str]
    warm: tuple[int, str]
    cold: tuple[int, str]

    def __str__(self) -> str:
        diff = "".join(list(difflib.unified_diff(self.cold[1].splitlines(True), self.warm[1].splitlines(True),
                                                 "--no-cache", "warm", n=2))[:60])
        return (f"seed {self.seed}, step {self.step}: check {' '.join(self.args)} after {'; '.join(self.edits)}: "
                f"warm exit {self.warm[0]}, --no-cache exit {self.cold[0]}\n{diff}")


@dataclass
class FuzzReport:
    seed: int
    edits: int = 0
    comparisons: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    served: dict[str, int] = field(default_factory=dict)  # how the warm runs were served (the record says)
    divergences: list[Divergence] = field(default_factory=list)
    seconds: float = 0.0


class Project:
    """A scratch copy of a project, a git repository (for ``git checkout`` edits)."""

    def __init__(self, root: Path, focus: bool = True) -> None:
        self.root = root
        # Aim most edits at the files and functions the last analysis read: an edit elsewhere
        # rarely tests more than the cache's test of unread files.
        self.focus = focus
        self.counter = 0
        self.commits: list[str] = []
        self._git("init", "-q")
        self.commit()

    def _git(self, *args: str) -> str:
        proc = subprocess.run(["git", "-c", "user.name=fuzz", "-c", "user.email=fuzz@example.invalid",
                               "-c", "commit.gpgsign=false", *args], cwd=self.root, capture_output=True, text=True)
        return proc.stdout.strip()

    def commit(self) -> None:
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "-m", f"state {len(self.commits)}")
        self.commits.append(self._git("rev-parse", "HEAD"))

    def files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.py") if not SKIP.intersection(p.relative_to(self.root).parts))

    def name(self) -> str:
        self.counter += 1
        return f"fz{self.counter}"

    def pick_file(self, rng: random.Random) -> Path | None:
        files = self.files()
        if self.focus and rng.random() < 0.8:
            parsed = [self.root / key for key in _record(self.root).get("parsed", ())]
            files = [p for p in parsed if p.is_file()] or files
        return rng.choice(files) if files else None

    def parsed_file(self, rng: random.Random) -> tuple[Path, str, ast.Module] | None:
        for _ in range(5):
            path = self.pick_file(rng)
            if path is None:
                return None
            text = _read(path)
            if text is None:
                continue
            try:
                return path, text, ast.parse(text)
            except (SyntaxError, ValueError):
                continue
        return None

    def function(self, rng: random.Random) -> tuple[Path, str, ast.AST] | None:
        for _ in range(5):
            found = self.parsed_file(rng)
            if found is None:
                return None
            path, text, tree = found
            functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if self.focus:
                analysed = _record(self.root).get("analysed", {}).get(self.key(path), {})
                starts = {lines[0] for lines in analysed.values()}
                functions = [f for f in functions if f.lineno in starts] or functions
            if functions:
                return path, text, rng.choice(functions)
        return None

    def key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()


def _record(root: Path) -> dict:
    """The last analysis's record, if readable (only to aim edits at what it read)."""
    try:
        return json.loads((root / ".bufferlint_cache" / "run.json").read_bytes())["body"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _save_if_valid(path: Path, lines: list[str]) -> bool:
    """Write ``lines`` if they parse (an edit that means to keep the code valid)."""
    text = "\n".join(lines)
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    _write(path, text)
    return True


def _statements(node: ast.AST) -> list[ast.stmt]:
    """Statements inside ``node`` that start their line (an edit can go before them)."""
    return [s for s in ast.walk(node) if isinstance(s, ast.stmt) and s is not node]


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _first_on_line(lines: list[str], statement: ast.stmt) -> bool:
    return not lines[statement.lineno - 1][:statement.col_offset].strip() if lines[statement.lineno - 1].isascii() else False


def _insert_before_statement(project: Project, rng: random.Random, make: Callable[[ast.AST], str | None],
                             what: str) -> str | None:
    """A line ``make(function)`` (None: not in this function) before one of a function's statements."""
    found = project.function(rng)
    if found is None:
        return None
    path, text, function = found
    lines = text.split("\n")
    statements = [s for s in _statements(function) if _first_on_line(lines, s)]
    if not statements:
        return None
    target = rng.choice(statements)
    line = make(function)
    if line is None:
        return None
    indent = lines[target.lineno - 1][:target.col_offset]
    lines.insert(target.lineno - 1, indent + line)
    _write(path, "\n".join(lines))
    return f"{what} at {project.key(path)}:{target.lineno}"


# -- the edits ------------------------------------------------------------------------------

def comment_line(project: Project, rng: random.Random) -> str | None:
    return _insert_before_statement(project, rng, lambda _: f"# {rng.choice(['note', 'noqa', 'todo'])} {project.name()}",
                                    "comment line added")


def delete_comment(project: Project, rng: random.Random) -> str | None:
    path = project.pick_file(rng)
    text = _read(path) if path else None
    if text is None:
        return None
    lines = text.split("\n")
    whole = [i for i, line in enumerate(lines) if line.strip().startswith("#")]
    trailing = [i for i, line in enumerate(lines) if "  # " in line and not line.strip().startswith("#")]
    if not whole and not trailing:
        return None
    if whole and (not trailing or rng.random() < 0.5):
        i = rng.choice(whole)
        del lines[i]
        what = "comment line deleted"
    else:
        i = rng.choice(trailing)
        lines[i] = lines[i][:lines[i].index("  # ")]
        what = "trailing comment deleted"
    _write(path, "\n".join(lines))
    return f"{what} at {project.key(path)}:{i + 1}"


def blank_line(project: Project, rng: random.Random) -> str | None:
    path = project.pick_file(rng)
    text = _read(path) if path else None
    if text is None:
        return None
    lines = text.split("\n")
    blanks = [i for i, line in enumerate(lines) if not line.strip()]
    if blanks and rng.random() < 0.4:
        i = rng.choice(blanks)
        del lines[i]
        what = "blank line deleted"
    else:
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, "")
        what = "blank line added"
    _write(path, "\n".join(lines))
    return f"{what} at {project.key(path)}:{i + 1}"


def spacing(project: Project, rng: random.Random) -> str | None:
    """What a formatter does on one line: a space added or taken away."""
    found = project.function(rng)
    if found is None:
        return None
    path, text, function = found
    lines = text.split("\n")
    candidates = [i for i in range(function.lineno - 1, function.end_lineno) if re.search(r", |\(|=", lines[i])]
    if not candidates:
        return None
    i = rng.choice(candidates)
    line = lines[i]
    choice = rng.choice([(", ", ",  "), ("(", "( "), (" = ", " =  "), (",  ", ", "), ("( ", "(")])
    spots = [m.start() for m in re.finditer(re.escape(choice[0]), line)]
    if not spots:
        return None
    at = rng.choice(spots)
    lines[i] = line[:at] + choice[1] + line[at + len(choice[0]):]
    _write(path, "\n".join(lines))
    return f"spacing {choice[0]!r} -> {choice[1]!r} at {project.key(path)}:{i + 1}"


def split_call(project: Project, rng: random.Random) -> str | None:
    """A call over several lines, one argument a line (black's style)."""
    found = project.function(rng)
    if found is None:
        return None
    path, text, function = found
    lines = text.split("\n")
    calls = [c for c in ast.walk(function) if isinstance(c, ast.Call) and c.lineno == c.end_lineno
             and (c.args or c.keywords) and lines[c.lineno - 1].isascii()]
    if not calls:
        return None
    call = rng.choice(calls)
    line = lines[call.lineno - 1]
    indent = _indent(line) + "    "
    parts = [ast.get_source_segment(text, a) for a in [*call.args, *call.keywords]]
    if any(p is None for p in parts):
        return None
    head = line[:call.func.end_col_offset]
    rest = line[call.end_col_offset:]
    if line[call.func.end_col_offset] != "(":
        return None
    new = head + "(\n" + "".join(f"{indent}    {p},\n" for p in parts) + indent + ")" + rest
    lines[call.lineno - 1:call.lineno] = new.split("\n")
    if not _save_if_valid(path, lines):
        return None
    return f"call split over lines at {project.key(path)}:{call.lineno}"


def rename_local(project: Project, rng: random.Random) -> str | None:
    found = project.function(rng)
    if found is None:
        return None
    path, text, function = found
    names = sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                   | {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg) and a.arg != "self"})
    if not names:
        return None
    name = rng.choice(names)
    lines = text.split("\n")
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    for i in range(first - 1, function.end_lineno):
        lines[i] = re.sub(rf"\b{re.escape(name)}\b", name + "_r", lines[i])
    _write(path, "\n".join(lines))
    return f"local {name} renamed in {project.key(path)}:{function.name}"


def rename_function(project: Project, rng: random.Random) -> str | None:
    """A function or method renamed, in its file only or wherever its name is written."""
    found = project.function(rng)
    if found is None:
        return None
    path, _, function = found
    name = function.name
    if name.startswith("__"):
        return None
    everywhere = rng.random() < 0.6
    for target in (project.files() if everywhere else [path]):
        text = _read(target)
        if text is not None and name in text:
            _write(target, re.sub(rf"\b{re.escape(name)}\b", name + "_renamed", text))
    return f"{name} renamed {'everywhere' if everywhere else 'in ' + project.key(path)}"


HELPERS = [
    "def {name}(executor, value):\n    return executor.submit(print, value)\n",
    "def {name}(value):\n    return value\n",
    "def {name}(value):\n    return value.clone()\n",
    "def {name}(pool, items):\n    for key, value in items:\n        pool.submit(print, key, value)\n",
    "def {name}(value):\n    import threading\n    threading.Thread(target=print, args=(value,)).start()\n",
    "def {name}(store, value):\n    store.append(value)\n",
]
METHODS = [
    "def {name}(self, value):\n    self.kept = value\n",
    "def {name}(self):\n    import threading\n    threading.Thread(target=print, args=(self.kept,)).start()\n",
    "def copy_(self, value):\n    self.kept = value\n",
    "def submit(self, fn, *args):\n    return fn(*args)\n",
    "def {name}(self, value):\n    return self.executor.submit(print, value)\n",
    "def process(self, x):\n    self.pending = x\n",
]


def add_helper(project: Project, rng: random.Random) -> str | None:
    path = project.pick_file(rng)
    text = _read(path) if path else None
    if text is None:
        return None
    name = project.name()
    _write(path, text.rstrip("\n") + "\n\n\n" + rng.choice(HELPERS).format(name=name))
    return f"helper {name} added to {project.key(path)}"


def add_method(project: Project, rng: random.Random) -> str | None:
    found = project.parsed_file(rng)
    if found is None:
        return None
    path, text, tree = found
    classes = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)]
    if not classes:
        return None
    cls = rng.choice(classes)
    lines = text.split("\n")
    indent = _indent(lines[cls.body[0].lineno - 1]) if lines[cls.body[0].lineno - 1].isascii() else None
    if indent is None:
        return None
    method = rng.choice(METHODS).format(name=project.name())
    block = ["", *(indent + line if line else "" for line in method.rstrip("\n").split("\n"))]
    lines[cls.end_lineno:cls.end_lineno] = block
    _write(path, "\n".join(lines))
    return f"method added to {project.key(path)}:{cls.name}"


def remove_function(project: Project, rng: random.Random) -> str | None:
    found = project.function(rng)
    if found is None:
        return None
    path, text, function = found
    tree = ast.parse(text)
    parent = next((p for p in ast.walk(tree) for f in ast.iter_fields(p) if isinstance(f[1], list)
                   and any(isinstance(c, ast.AST) and (c.lineno, c.col_offset) == (function.lineno, function.col_offset)
                           and isinstance(c, type(function)) for c in f[1])), None)
    lines = text.split("\n")
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    indent = _indent(lines[function.lineno - 1])
    body = getattr(parent, "body", []) if parent is not None else []
    replacement = [indent + "pass"] if len(body) == 1 and body[0].lineno == function.lineno else []
    lines[first - 1:function.end_lineno] = replacement
    if not _save_if_valid(path, lines):
        return None
    return f"{function.name} removed from {project.key(path)}"


def move_function(project: Project, rng: random.Random) -> str | None:
    found = project.parsed_file(rng)
    if found is None:
        return None
    path, text, tree = found
    functions = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    if len(functions) < 2:
        return None
    moved = rng.choice(functions)
    lines = text.split("\n")
    first = min([moved.lineno] + [d.lineno for d in moved.decorator_list])
    block = lines[first - 1:moved.end_lineno]
    del lines[first - 1:moved.end_lineno]
    rest = "\n".join(lines).rstrip("\n")
    _write(path, rest + "\n\n\n" + "\n".join(block) + "\n")
    return f"{moved.name} moved to the end of {project.key(path)}"


IMPORTS = ["import threading", "import concurrent.futures", "from concurrent.futures import ThreadPoolExecutor",
           "import torch", "from runai_model_streamer import SafetensorsStreamer", "import os as os_alias"]


def change_import(project: Project, rng: random.Random) -> str | None:
    found = project.parsed_file(rng)
    if found is None:
        return None
    path, text, tree = found
    lines = text.split("\n")
    imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom)) and s.lineno == s.end_lineno]
    if imports and rng.random() < 0.4:
        target = rng.choice(imports)
        if rng.random() < 0.5:
            del lines[target.lineno - 1]
            what = "import removed"
        else:
            lines[target.lineno - 1] = "# " + lines[target.lineno - 1]
            what = "import commented out"
    else:
        at = imports[-1].end_lineno if imports else 0
        lines.insert(at, rng.choice(IMPORTS))
        what = "import added"
    _write(path, "\n".join(lines))
    return f"{what} in {project.key(path)}"


CONFIGS = [
    "",
    'ignore = ["BL002"]\n',
    'select = ["BL001"]\n',
    'rule-packs = ["fuzz_pack.toml"]\n',
    'extend-exclude = ["fz_excluded"]\n',
]
PACKS = [
    '[[sources]]\ncall = "{module}.{function}"\nproduces = "borrowed"\n',
    '[[sinks]]\ncall = "{module}.{function}"\n',
    "",
]


def change_config(project: Project, rng: random.Random) -> str | None:
    """``[tool.bufferlint]`` rewritten (rules, excludes, a project pack), or the pack edited."""
    pyproject = project.root / "pyproject.toml"
    text = _read(pyproject) or ""
    head, _, table = text.partition("[tool.bufferlint]\n")
    kept = "\n".join(line for line in table.split("\n") if not re.match(r"(ignore|select|rule-packs|extend-exclude) = ", line))
    found = project.function(rng)
    if rng.random() < 0.5 or found is None:
        setting = rng.choice(CONFIGS)
        _write(pyproject, head + "[tool.bufferlint]\n" + setting + kept.lstrip("\n"))
        return f"configuration: {setting.strip() or 'defaults'}"
    path, _, function = found
    module = ".".join(path.relative_to(project.root).with_suffix("").parts)
    _write(project.root / "fuzz_pack.toml", rng.choice(PACKS).format(module=module, function=function.name))
    return f"project pack names {module}.{function.name}"


def delete_file(project: Project, rng: random.Random) -> str | None:
    files = project.files()
    if len(files) < 3:
        return None
    path = project.pick_file(rng)
    path.unlink()
    return f"{project.key(path)} deleted"


def add_file(project: Project, rng: random.Random) -> str | None:
    files = project.files()
    if not files:
        return None
    source = rng.choice(files)
    target = source.with_name(f"{project.name()}.py")
    if rng.random() < 0.5:
        text = _read(source) or ""
        what = f"copy of {project.key(source)}"
    else:
        text = "".join(rng.sample(HELPERS, 2)).format(name=project.name()).replace("\ndef", "\n\n\ndef")
        what = "new helpers"
    _write(target, text)
    return f"{project.key(target)} added ({what})"


def same_size(project: Project, rng: random.Random) -> str | None:
    """One letter of an identifier changed, the size kept, the modification time put back."""
    path = project.pick_file(rng)
    if path is None:
        return None
    data = path.read_bytes()
    spots = [m.start() for m in re.finditer(rb"(?<=[a-z_])[a-z](?=[a-z_])", data)]
    if not spots:
        return None
    at = rng.choice(spots)
    letter = rng.choice([c for c in b"abcdefghijklmnopqrstuvwxyz" if c != data[at]])
    before = os.stat(path)
    path.write_bytes(data[:at] + bytes([letter]) + data[at + 1:])
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    return f"same-size edit at byte {at} of {project.key(path)}, mtime restored"


def statement(project: Project, rng: random.Random) -> str | None:
    """An edit inside a function: a statement or a call added, or one made ``pass``."""
    kind = rng.choice(["add", "call", "pass", "literal"])
    if kind in ("add", "call"):
        return _insert_before_statement(project, rng, lambda _: "_fz = None" if kind == "add" else 'print("fz")',
                                        f"statement ({kind}) added")
    found = project.function(rng)
    if found is None:
        return None
    path, text, function = found
    lines = text.split("\n")
    if kind == "literal":
        spots = [i for i in range(function.lineno - 1, function.end_lineno) if '"' in lines[i]]
        if not spots:
            return None
        i = rng.choice(spots)
        lines[i] = lines[i].replace('"', '"é', 1) if rng.random() < 0.5 else re.sub(r'"é', '"', lines[i], count=1)
    else:
        targets = [s for s in _statements(function) if s.lineno == s.end_lineno and _first_on_line(lines, s)
                   and not isinstance(s, (ast.If, ast.For, ast.While, ast.With, ast.Try))]
        if not targets:
            return None
        target = rng.choice(targets)
        i = target.lineno - 1
        lines[i] = lines[i][:target.col_offset] + "pass"
    out = "\n".join(lines)
    _write(path, out)
    return f"statement ({kind}) at {project.key(path)}:{i + 1}"


def keep_in_field(project: Project, rng: random.Random) -> str | None:
    """A method starts keeping a value in a field of its receiver (``self._fz_kept = w``,
    the edit of a loader that keeps a weight): a new store, read by nothing."""
    def keep(function: ast.AST) -> str | None:
        params = [a.arg for a in function.args.args]  # type: ignore[attr-defined]
        stored = sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        if not params or len(params) + len(stored) < 2:
            return None
        return f"{params[0]}._fz_kept = {rng.choice(params[1:] + stored)}"
    return _insert_before_statement(project, rng, keep, "keep in field")


def git_checkout(project: Project, rng: random.Random) -> str | None:
    project.commit()
    if len(project.commits) < 2:
        return None
    # Half the time the original: random edits drift (a project whose loader was renamed away
    # has little left to test).
    revision = project.commits[0] if rng.random() < 0.5 else rng.choice(project.commits[:-1])
    project._git("checkout", "-q", "--force", "--detach", revision)
    project._git("clean", "-q", "-f", "-d")  # files added since (never the cache: it ignores itself)
    return f"git checkout of state {project.commits.index(revision)}"


EDITS: dict[str, Edit] = {
    "comment line": comment_line, "comment deleted": delete_comment, "blank line": blank_line,
    "spacing": spacing, "split call": split_call, "rename local": rename_local, "rename function": rename_function,
    "add helper": add_helper, "add method": add_method, "remove function": remove_function,
    "move function": move_function, "import": change_import, "config": change_config, "delete file": delete_file,
    "add file": add_file, "same size": same_size, "statement": statement, "keep in field": keep_in_field,
    "git checkout": git_checkout,
}
WEIGHTS = {"git checkout": 0.4, "config": 0.5, "delete file": 0.3, "add file": 0.5, "rename function": 0.5,
           "remove function": 0.5}
PROCESS_STEPS = ("concurrent", "killed")  # steps that run bufferlint as processes


# -- the runs -------------------------------------------------------------------------------

def run_in_process(root: Path, args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(["check", "--format", "json", "--no-color", *args])
    finally:
        os.chdir(cwd)
    return code, out.getvalue()


@contextlib.contextmanager
def parallel_runs():
    """Worker processes for the syntax check and the fix planning however few the files (their
    thresholds are sized for large trees), so that a ``--jobs 2`` run of a small project takes
    the parallel path."""
    saved = syntax_check.PARALLEL_FROM, syntax_check.CHUNK, runner.PARALLEL_FILES
    syntax_check.PARALLEL_FROM, syntax_check.CHUNK, runner.PARALLEL_FILES = 1, 1, 1
    try:
        yield
    finally:
        syntax_check.PARALLEL_FROM, syntax_check.CHUNK, runner.PARALLEL_FILES = saved


def warm_run(root: Path, args: list[str], parallel: bool) -> tuple[int, str]:
    if not parallel:
        return run_in_process(root, ["--jobs", "1", *args])
    with parallel_runs():
        return run_in_process(root, ["--jobs", "2", *args])


def _command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "bufferlint", "check", "--format", "json", "--no-color", *args]


def _environment() -> dict[str, str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"}
    environment.pop("BUFFERLINT_DEBUG", None)
    environment.pop("BUFFERLINT_CACHE_DIR", None)
    return environment


def run_process(root: Path, args: list[str]) -> tuple[int, str]:
    proc = subprocess.run(_command(args), cwd=root, capture_output=True, text=True, env=_environment(), timeout=600)
    return proc.returncode, proc.stdout


def concurrent_runs(root: Path, args: list[str]) -> list[tuple[int, str]]:
    procs = [subprocess.Popen(_command(args), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              env=_environment()) for _ in range(2)]
    outputs = [proc.communicate(timeout=600)[0] for proc in procs]  # both read while they run
    return [(proc.returncode, output) for proc, output in zip(procs, outputs)]


def killed_run(root: Path, args: list[str], rng: random.Random) -> None:
    proc = subprocess.Popen(_command(args), cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=_environment(), start_new_session=True)
    time.sleep(rng.uniform(0.05, 1.5))
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# -- the loop -------------------------------------------------------------------------------

def corpus_projects() -> dict[str, Path | list[Path]]:
    """The fixture corpus as small projects (a run of each takes a few hundredths of a
    second): each folder of ``tests/fixtures`` that is a project, and the single-file cases
    of the analysis corpus in groups of eight."""
    analysis = FIXTURES / "analysis"
    projects: dict[str, Path | list[Path]] = {}
    projects.update({f"analysis/{p.name}": p for p in sorted(analysis.iterdir()) if p.is_dir()})
    projects.update({f"analysis_config/{p.name}": p for p in sorted((FIXTURES / "analysis_config").iterdir()) if p.is_dir()})
    projects.update({"advances": FIXTURES / "advances", "fixes": FIXTURES / "fixes"})
    singles = sorted(analysis.glob("*.py"))
    for start in range(0, len(singles), 8):
        projects[f"analysis/{singles[start].stem}..."] = singles[start:start + 8]
    return projects


def fuzz(source: Path | list[Path], scratch: Path, seed: int, edits: int, *, processes: bool = True,
         focus: bool = True, batch: int = 1, log: Callable[[str], None] | None = None) -> FuzzReport:
    """Copy ``source`` (a folder, or files and folders to put side by side) to ``scratch`` and
    apply ``edits`` seeded random edits, ``batch`` (at most) between two comparisons of a warm
    run with a ``--no-cache`` run. ``processes``: also run concurrent and killed runs (slower:
    each is a process)."""
    rng = random.Random(seed)
    parallel = random.Random(f"{seed} jobs")  # which warm runs use two processes
    ignore = shutil.ignore_patterns(*SKIP, "*.expected")
    if isinstance(source, Path):
        shutil.copytree(source, scratch, ignore=ignore)
    else:
        scratch.mkdir(parents=True)
        for part in source:
            if part.is_dir():
                shutil.copytree(part, scratch / part.name, ignore=ignore)
            else:
                shutil.copy(part, scratch / part.name)
    if not (scratch / "pyproject.toml").exists():
        _write(scratch / "pyproject.toml", "[tool.bufferlint]\n")
    project = Project(scratch, focus)
    report = FuzzReport(seed)
    start = time.perf_counter()
    warm_run(scratch, [], parallel.random() < 0.5)  # the first run writes the cache
    names = list(EDITS) + (list(PROCESS_STEPS) if processes else [])
    weights = [WEIGHTS.get(name, 0.25 if name in PROCESS_STEPS else 1.0) for name in names]
    step = 0
    while report.edits < edits:
        step += 1
        applied: list[str] = []
        kind = ""
        for _ in range(rng.randint(1, batch)):
            for _attempt in range(20):
                kind = rng.choices(names, weights)[0]
                what = EDITS[kind](project, rng) if kind in EDITS else _content_edit(project, rng)
                if what is not None:
                    break
            else:
                continue
            applied.append(what)
            report.kinds[kind] = report.kinds.get(kind, 0) + 1
            report.edits += 1
            if kind in PROCESS_STEPS:
                break
        args = _report_args(project, rng)
        if kind == "killed":
            killed_run(scratch, args, rng)
            applied.append("a run killed part way")
        if kind == "concurrent":
            cold = run_process(scratch, ["--no-cache", *args])
            pairs = [(warm, cold) for warm in concurrent_runs(scratch, args)]
            applied.append("two runs at once")
        else:
            two = parallel.random() < 0.5
            if two:
                applied.append("the warm run with two processes")
            warm = warm_run(scratch, args, two)
            pairs = [(warm, run_in_process(scratch, ["--no-cache", "--jobs", "1", *args]))]
            served = _served(scratch)
            report.served[served] = report.served.get(served, 0) + 1
        for warm, cold in pairs:
            report.comparisons += 1
            if warm != cold:
                divergence = Divergence(seed, step, applied, args, warm, cold)
                report.divergences.append(divergence)
                if log is not None:
                    log(str(divergence))
        if log is not None and step % 10 == 0:
            log(f"seed {seed}: {report.edits} edits, {report.comparisons} comparisons, "
                f"{len(report.divergences)} divergences, {time.perf_counter() - start:.0f} s")
        if rng.random() < 0.1:
            project.commit()  # a revision a later ``git checkout`` may return to
    report.seconds = time.perf_counter() - start
    return report


def _served(root: Path) -> str:
    record = _record(root)
    if record.get("replayed"):
        return "replayed"
    return "reused" if record.get("reused") else "analysed"


def _content_edit(project: Project, rng: random.Random) -> str | None:
    """The edit before a concurrent or killed run: any edit of a file."""
    kind = rng.choice(["comment line", "blank line", "statement", "add helper", "spacing"])
    return EDITS[kind](project, rng)


def _report_args(project: Project, rng: random.Random) -> list[str]:
    """Mostly the whole project; sometimes one or two files, as pre-commit passes them."""
    files = project.files()
    if files and rng.random() < 0.25:
        return [project.key(p) for p in rng.sample(files, min(len(files), rng.randint(1, 2)))]
    return ["."]
