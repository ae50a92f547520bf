"""Generated programs for the fuzz test (``test_fuzz.py``, a short bounded run) and the long
run (``scripts/fuzz.py``): loaders built from the pieces buffer-ownership bugs are made of
(streamed views, loops, branches, containers, pools, guards, device copies), around odd
but valid Python from hypothesmith when it is installed.

Each program is put in a copy of the bundled example project and run through the real
command line (in process): ``check --fix --unsafe-fixes --format json``, then once more.
A program passes when no internal error is reported, every file the fixer wrote still
parses, and the second run changes nothing (the fixes are idempotent).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from bufferlint import cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "runai_loader"

try:
    import hypothesmith
except ImportError:  # the long run and the test still fuzz the loader shapes
    hypothesmith = None

HEADER = (
    "import concurrent.futures\n"
    "import torch\n"
    "from streamloader.executor_utils import maybe_submit, should_async_load\n"
    "from streamloader.weights import stream_safetensors\n"
    "\n"
    "cache = {}\n"
    "kept = []\n"
)

# statements inside the loop over streamed (name, w) pairs
LEAVES = [
    "kept.append(w)",
    "cache[name] = w",
    "executor.submit(params[name].copy_, w)",
    "futures.append(executor.submit(lambda: params[name].copy_(w)))",
    "maybe_submit(executor, futures, should_async_load(w), params[name].copy_, w)",
    "w = w.clone()",
    'if getattr(w, "_sglang_runai_streamer_tensor", False):\n    continue',
    'params[name].copy_(w.to("cuda", non_blocking=True))',
    "torch.cuda.synchronize()",
    "y = w[0]",
    "z = [w, w]",
    "self_like.tensor = w",
    "del name",
    "pass",
    "continue",
    "break",
    "return w",
    "yield w",
]
CONDITIONS = ["x", "name == 'a'", "not kept", "w is None", "x and w", "len(kept) > 3"]


def _indent(block: str, by: str = "    ") -> str:
    return "".join(by + line + "\n" if line else "\n" for line in block.splitlines())


@st.composite
def blocks(draw, depth: int = 0) -> str:
    """A statement sequence of the loop body: leaves and compound statements around them."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["leaf", "leaf", "if", "elif", "try", "with", "while", "for"] if depth < 3 else ["leaf"]))
        if kind == "leaf":
            parts.append(draw(st.sampled_from(LEAVES)))
        elif kind == "if":
            cond = draw(st.sampled_from(CONDITIONS))
            text = f"if {cond}:\n" + _indent(draw(blocks(depth + 1)))
            if draw(st.booleans()):
                text += "else:\n" + _indent(draw(blocks(depth + 1)))
            parts.append(text)
        elif kind == "elif":
            branches = draw(st.integers(2, 40))
            text = "if x == 0:\n" + _indent(draw(blocks(depth + 1)))
            text += "".join(f"elif x == {i}:\n    pass\n" for i in range(1, branches))
            parts.append(text + "elif x is None:\n" + _indent(draw(blocks(depth + 1))))
        elif kind == "try":
            parts.append("try:\n" + _indent(draw(blocks(depth + 1))) + "except Exception:\n" + _indent(draw(blocks(depth + 1)))
                         + "finally:\n    pass\n")
        elif kind == "with":
            parts.append("with torch.no_grad():\n" + _indent(draw(blocks(depth + 1))))
        elif kind == "while":
            parts.append("while x:\n" + _indent(draw(blocks(depth + 1))) + "    x = None\n")
        else:
            parts.append("for v in z_list:\n" + _indent(draw(blocks(depth + 1))))
    return "\n".join(parts) + "\n"


@st.composite
def programs(draw) -> str:
    """A module with one loader over streamed weights, in a function, method or at top level."""
    loop = "for name, w in stream_safetensors(files):\n" + _indent(draw(blocks()))
    loop = "with concurrent.futures.ThreadPoolExecutor() as executor:\n" + _indent(loop)
    shape = draw(st.sampled_from(["function", "method", "async", "module"]))
    if shape == "module":
        body = "x, files, params, futures, z_list, self_like = 0, [], {}, [], [], None\n" + loop.replace("return w", "pass")
        body = body.replace("yield w", "pass").replace("continue", "pass").replace("break", "pass")
    else:
        body = "def load(x, files, params, futures, z_list, self_like):\n" + _indent(loop)
        if shape == "async":
            body = "async " + body.replace("yield w", "pass")
        if shape == "method":
            body = "class Loader:\n" + _indent(body.replace("(x, files", "(self, x, files"))
    # hypothesmith's programs are slow to generate: around one loader in four
    extra = draw(hypothesmith.from_grammar()) if hypothesmith is not None and draw(st.integers(0, 3)) == 0 else ""
    return HEADER + "\n\n" + body + ("\n\n" + extra if extra.strip() else "")


def compiles(text: str) -> bool:
    try:
        compile(text, "gen.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@dataclass
class Outcome:
    problems: list[str]
    findings: int = 0
    fixed_files: int = 0


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


def check_program(text: str) -> Outcome:
    """Run the analysis and the fixer on ``text`` (as ``gen.py`` in the example project)."""
    with tempfile.TemporaryDirectory(prefix="bufferlint-fuzz-") as tmp:
        root = Path(tmp) / "project"
        shutil.copytree(EXAMPLE, root)
        (root / "gen.py").write_text(text, encoding="utf-8")
        before = {p: p.read_bytes() for p in root.rglob("*.py")}
        previous = os.getcwd()
        os.chdir(root)
        try:
            code, out, err = _cli("check", "--fix", "--unsafe-fixes", "--format", "json", "gen.py")
            problems = _problems(code, out, err, "first run")
            after = {p: p.read_bytes() for p in root.rglob("*.py")}
            changed = [p for p in after if after[p] != before.get(p)]
            for path in changed:
                try:
                    ast.parse(after[path])
                except SyntaxError as exc:
                    problems.append(f"the fixed {path.name} does not parse: {exc}")
            findings = len(json.loads(out)["findings"]) if out.startswith("{") else 0
            if changed and not problems:
                code, out, err = _cli("check", "--fix", "--unsafe-fixes", "--format", "json", "gen.py")
                problems += _problems(code, out, err, "second run")
                again = {p: p.read_bytes() for p in root.rglob("*.py")}
                problems += [f"not idempotent: the second run changed {p.name}" for p in again if again[p] != after.get(p)]
        finally:
            os.chdir(previous)
    return Outcome(problems, findings, len(changed))


def _problems(code: int, out: str, err: str, run: str) -> list[str]:
    problems = [f"{run}: {line}" for line in err.splitlines() if "internal error" in line]
    try:
        report = json.loads(out)
    except ValueError:
        return problems + [f"{run}: exit {code}, no JSON report: {err.strip()[:300]}"]
    problems += [f"{run}: {e['path']}: {e['message']}" for e in report["errors"]]
    if code == 2 and not problems:
        problems.append(f"{run}: exit 2: {err.strip()[:300]}")
    return problems
