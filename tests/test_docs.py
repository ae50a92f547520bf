"""The documentation is tested: every fenced block of README.md and docs/*.md is run as written.

Sybil finds the blocks (and the ``<!-- docs-test: ... -->`` directive before a block, which says
how to run it when its language alone does not); this module runs them:

- ``console``: each ``$ command`` runs in bash, in a scratch copy of the repository (the
  documented paths exist there; directed ``in DIR``: in that directory of it; ``copy FROM to
  TO``: with a copy made first), with this environment's ``bufferlint`` on PATH (directed
  ``venv``: a fresh virtualenv's, for commands that install); output shown
  under a command must be exactly what it prints (stdout and stderr); a command with no output
  shown must exit 0 or 1 (bufferlint's "findings" status), never with an error.
- ``python``: executed in order in one namespace per document, in that scratch copy; a block
  directed ``pytest-file`` is a test module, run by a real pytest with its expected outcome.
- ``toml``: directed ``config`` (a ``pyproject.toml`` that ``bufferlint check`` loads with no
  configuration error), ``pack`` (a rule pack that loads), or ``editor`` (an editor's server
  set-up: the command it names answers the LSP handshake); ``json``/``jsonc`` likewise
  ``editor``, or ``report`` (a JSON report whose keys are those bufferlint writes).
- ``yaml``: directed ``pre-commit`` (a real pre-commit runs the configuration as written, the
  repository URL redirected to this checkout with git's ``insteadOf``) or ``workflow``.
- A block that cannot run here is directed ``not run: <why>``; those are listed at the end of
  every run (``conftest.py``), never silently absent. A block with no way to run fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from sybil import Document, Example, Lexeme, Sybil
from sybil.evaluators.python import pad
from sybil.parsers.markdown.lexers import DirectiveInHTMLCommentLexer, RawFencedCodeBlockLexer

from conftest import REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
GITHUB = "https://github.com/<owner>/bufferlint"  # the docs' stand-in for where users get it
NOT_RUN: list[str] = []  # "path:line: why", printed by conftest's terminal summary


# ---------------------------------------------------------------------------
# Parsing: Sybil's lexers for every fenced block and the directive comments


@dataclass
class Block:
    language: str
    source: Lexeme  # the text, knowing its line in the document
    directive: str = ""


@dataclass
class Sandbox:
    """Per document: a scratch copy of the repository and the pending directive."""

    root: Path
    directive: str = ""
    tutorial: str = ""  # the configuration a tutorial's ``config-step`` blocks build


def parse_blocks(document: Document):
    lexer = RawFencedCodeBlockLexer(
        info_pattern=re.compile(r"(?P<language>[^\n]*)$\n", re.MULTILINE),
        mapping={"language": "language", "source": "source"},
    )
    for region in lexer(document):
        region.parsed = Block(region.lexemes["language"].strip(), region.lexemes["source"])
        region.evaluator = evaluate_block
        yield region


def parse_directives(document: Document):
    for region in DirectiveInHTMLCommentLexer(directive="docs-test")(document):
        region.parsed = region.lexemes["arguments"].strip()
        region.evaluator = remember_directive
        yield region


def remember_directive(example: Example) -> None:
    example.namespace["_sandbox"].directive = example.parsed


# ---------------------------------------------------------------------------
# Running


def line_of(example: Example) -> str:
    return f"{Path(example.path).relative_to(REPO)}:{example.line}"


def evaluate_block(example: Example) -> str | None:
    sandbox: Sandbox = example.namespace["_sandbox"]
    block: Block = example.parsed
    block.directive, sandbox.directive = sandbox.directive, ""
    mode, _, argument = block.directive.partition(" ")
    if block.directive.startswith("not run:"):
        reason = block.directive.removeprefix("not run:").strip()
        assert reason, f"{line_of(example)}: 'not run:' must say why"
        NOT_RUN.append(f"{line_of(example)}: {reason}")
        return None
    runner = RUNNERS.get((block.language, mode))
    assert runner, f"{line_of(example)}: no way to run a ```{block.language} block directed {block.directive!r}"
    runner(example, block, sandbox, argument.strip())
    return None


def environment(sandbox: Sandbox) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BUFFERLINT_", "PYTEST_", "GIT_"))}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", PYTHONPATH=str(REPO), NO_COLOR="1",
               HOME=str(sandbox.root.parent / "home"), COLUMNS="100")
    env.pop("CI", None)
    return env


def commands(source: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines and the output lines shown under each."""
    session: list[tuple[str, list[str]]] = []
    for line in source.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            assert session, f"output before the first command: {line!r}"
            session[-1][1].append(line)
    return session


def run_console(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """Each command in one bash session (``cd`` and ``export`` carry over), output compared."""
    cwd, env = sandbox.root, environment(sandbox)
    if block.directive == "venv":  # commands that install: into a fresh virtualenv, first on PATH
        venv_dir = sandbox.root.parent / f"venv-{example.line}"
        subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True, timeout=300)
        env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"
        env.pop("PYTHONPATH")
    elif block.directive.startswith("in "):
        cwd = sandbox.root / argument
    elif block.directive.startswith("copy "):  # "copy FROM to TO": a project the commands name
        source, _, target = argument.partition(" to ")
        shutil.copytree(sandbox.root / source, sandbox.root / target)
    marker = "@@docs-test-status"
    script = "".join(f"{{\n{command}\n}} 2>&1\necho \"{marker} $?\"\n" for command, _ in commands(block.source))
    proc = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)
    outputs = re.split(rf"\n?{marker} (\d+)\n", proc.stdout)
    for index, (command, shown) in enumerate(commands(block.source)):
        assert 2 * index + 1 < len(outputs), f"{line_of(example)}: `{command}` did not finish:\n{proc.stdout}{proc.stderr}"
        printed, status = outputs[2 * index], int(outputs[2 * index + 1])
        if shown:
            assert printed.rstrip("\n").splitlines() == shown, (
                f"{line_of(example)}: `{command}` printed (exit {status}):\n{printed}\nthe documentation shows:\n"
                + "\n".join(shown))
        else:
            assert status in (0, 1), f"{line_of(example)}: `{command}` failed (exit {status}):\n{printed}"


def run_python(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    cwd = Path.cwd()
    os.chdir(sandbox.root / argument if argument else sandbox.root)
    try:
        source = pad(block.source, example.line + block.source.line_offset)  # tracebacks name the doc's lines
        exec(compile(source, example.path, "exec", dont_inherit=True), example.namespace)
    finally:
        os.chdir(cwd)


def run_pytest_file(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """A test module as written; the directive says ``passes`` or ``fails with "<text>"``."""
    test = sandbox.root / "doc_example_test" / f"test_doc_line_{example.line}.py"
    test.parent.mkdir(exist_ok=True)
    test.write_text(block.source, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                          cwd=test.parent, env=environment(sandbox), capture_output=True, text=True, timeout=600)
    expected = re.fullmatch(r'(passes|fails with "(.+)")', argument)
    assert expected, f"{line_of(example)}: pytest-file needs 'passes' or 'fails with \"...\"', not {argument!r}"
    if expected.group(1) == "passes":
        assert proc.returncode == 0, proc.stdout
    else:
        assert proc.returncode == 1 and expected.group(2) in proc.stdout, proc.stdout


def run_config(example: Example, block: Block, sandbox: Sandbox, argument: str, text: str = "") -> None:
    """A ``[tool.bufferlint]`` table as a project's pyproject.toml, with every file it names
    present (a rule pack it lists: the pack of this document's ``pack`` block, or an empty one)."""
    text = text or block.source
    project = sandbox.root / "doc_config_project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir()
    (project / "pyproject.toml").write_text(text, encoding="utf-8")
    settings = tomllib.loads(text)["tool"]["bufferlint"]
    for pack in settings.get("rule-packs", []):
        (project / pack).parent.mkdir(parents=True, exist_ok=True)
        (project / pack).write_text(sandbox.root.joinpath("doc_pack.toml").read_text(encoding="utf-8")
                                    if (sandbox.root / "doc_pack.toml").is_file() else "", encoding="utf-8")
    (project / "mod.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    proc = subprocess.run([str(BIN / "bufferlint"), "check", "--no-cache", "."], cwd=project,
                          env=environment(sandbox), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{line_of(example)}: the configuration does not load:\n{proc.stdout}{proc.stderr}"


def run_config_step(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """A tutorial's step: its fragment added to the configuration the earlier steps built."""
    sandbox.tutorial += textwrap.dedent(block.source) + "\n"
    run_config(example, block, sandbox, argument, sandbox.tutorial)


def run_pack(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """A rule pack file as written: it loads, and a project using it checks cleanly."""
    from bufferlint.packs import load_pack

    path = sandbox.root / "doc_pack.toml"
    path.write_text(block.source, encoding="utf-8")
    load_pack(path)
    project = sandbox.root / "doc_pack_project"
    project.mkdir(exist_ok=True)
    (project / "pyproject.toml").write_text(f'[tool.bufferlint]\nrule-packs = ["{path.as_posix()}"]\n')
    (project / "mod.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    proc = subprocess.run([str(BIN / "bufferlint"), "check", "--no-cache", "."], cwd=project,
                          env=environment(sandbox), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{line_of(example)}: a project using the pack fails:\n{proc.stdout}{proc.stderr}"


def lsp_handshake(command: list[str], sandbox: Sandbox) -> None:
    """Start the server an editor configuration names and do what the editor does first:
    initialize, initialized, shutdown, exit."""
    assert command[0] == "bufferlint", command
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    framed = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                      for body in (json.dumps(m).encode() for m in messages))
    proc = subprocess.run([str(BIN / command[0]), *command[1:]], input=framed, cwd=sandbox.root,
                          env=environment(sandbox), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert b'"capabilities"' in proc.stdout and b'"id": 2' in proc.stdout.replace(b'"id":2', b'"id": 2'), proc.stdout


def run_editor(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """An editor's set-up of the language server (VS Code's JSON settings, Helix's TOML): it
    parses, and the command it names answers the handshake."""
    if block.language == "toml":
        servers = tomllib.loads(block.source)["language-server"]
        assert all(name in servers for language in tomllib.loads(block.source)["language"]
                   for name in language["language-servers"] if name == "bufferlint")
        command = [servers["bufferlint"]["command"], *servers["bufferlint"]["args"]]
    else:
        text = "\n".join(line for line in block.source.splitlines() if not line.lstrip().startswith("//"))
        settings = json.loads(text)
        command = [settings["glspc.server.command"], *settings["glspc.server.commandArguments"]]
    lsp_handshake(command, sandbox)


def run_report(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """A JSON report as the documentation shows it: every key it uses is one bufferlint writes
    (compared with a real ``--format json`` report of the example and a broken file)."""
    shown = json.loads(block.source)
    project = sandbox.root / "doc_report_project"
    shutil.copytree(REPO / "examples" / "runai_loader", project)
    (project / "broken.py").write_text("def f(:\n", encoding="utf-8")
    real = []  # the example's guard finding, and the loader call it stands for (BL001 alone selected)
    for selection in ([], ["--select", "BL001"]):
        proc = subprocess.run([str(BIN / "bufferlint"), "check", "--no-cache", "--format", "json", "--unsafe-fixes",
                               *selection, "."], cwd=project, env=environment(sandbox), capture_output=True, text=True,
                              timeout=120)
        real.append(json.loads(proc.stdout))

    def keys(value, where="") -> set[str]:
        if isinstance(value, dict):
            return {f"{where}.{k}" for k in value} | {x for k, v in value.items() for x in keys(v, f"{where}.{k}")}
        if isinstance(value, list):
            return {x for item in value for x in keys(item, f"{where}[]")}
        return set()

    unknown = keys(shown) - set().union(*map(keys, real))
    assert not unknown, f"{line_of(example)}: keys bufferlint does not write: {sorted(unknown)}"


def run_tree(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """A map of the source tree: every module and directory it names exists under it."""
    base = REPO / argument
    names = re.findall(r"^\s*((?:[\w/]+(?:\.py)?/?)(?:, [\w/]+(?:\.py)?/?)*)(?:\s{2,}|$)", block.source, re.MULTILINE)
    missing = [name for group in names for name in group.split(", ")
               if name.rstrip("/") != base.name and not any(base.rglob(name.rstrip("/")))]
    assert names and not missing, f"{line_of(example)}: not in {argument}: {missing}"


def github_redirected(sandbox: Sandbox) -> dict[str, str]:
    """The environment in which git (so pip and pre-commit) fetches the documented GitHub URL
    from a clone of this repository, tags included: git's ``insteadOf``, so the commands and
    configurations run exactly as written and their ``rev`` must exist here."""
    clone = sandbox.root.parent / "bufferlint-clone"
    if not clone.is_dir():
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True, timeout=300)
    env = environment(sandbox)  # the user configuration, in the scratch HOME (pre-commit drops GIT_* variables)
    Path(env["HOME"], ".gitconfig").write_text(f'[url "{clone.as_uri()}"]\n\tinsteadOf = {GITHUB}\n', encoding="utf-8")
    env.pop("PYTHONPATH")  # what runs is the bufferlint installed from the URL, not this checkout
    return env


def documented_revs_resolve(example: Example, block: Block) -> bool:
    """Whether every revision the block names (``rev: X``, ``bufferlint@X``) is a commit of this
    repository. A clone without tags (``--depth``, ``--no-tags``) cannot tell: the block is listed
    as not run, with that reason. A clone with tags must hold each named revision."""
    revs = set(re.findall(r"^\s*rev:\s*(\S+)", block.source, re.MULTILINE))
    revs |= set(re.findall(re.escape(GITHUB) + r"@([\w.-]+)", block.source))
    tags = subprocess.run(["git", "tag", "--list"], cwd=REPO, capture_output=True, text=True).stdout.split()
    missing = sorted(rev for rev in revs if subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=REPO, capture_output=True).returncode)
    if missing and not tags:
        NOT_RUN.append(f"{line_of(example)}: this clone has no tags (shallow or --no-tags), so the documented "
                       f"revision {', '.join(missing)} cannot be fetched from it; a full clone has it")
        return False
    assert not missing, f"{line_of(example)}: the documented revision {missing} is not in this repository ({tags})"
    return True


def run_pre_commit(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """The ``.pre-commit-config.yaml`` as written (``<owner>``'s repository: a clone of this one,
    see ``github_redirected``), run by the real pre-commit on a project with a finding."""
    if not documented_revs_resolve(example, block):
        return
    config = yaml.safe_load(block.source)
    target = sandbox.root.parent / "pre-commit-target"
    shutil.copytree(REPO / "examples" / "runai_loader", target)
    (target / ".pre-commit-config.yaml").write_text(block.source, encoding="utf-8")
    env = {**github_redirected(sandbox), "PRE_COMMIT_HOME": str(sandbox.root.parent / "pre-commit-home")}
    for command in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(command, cwd=target, check=True, env=env, capture_output=True)
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=target, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    ran = re.findall(r"^(bufferlint[^.]*)\.+Failed$", proc.stdout, re.MULTILINE)
    assert len(ran) == sum(len(repo["hooks"]) for repo in config["repos"]), proc.stdout  # each hook ran and failed
    assert "BL001" in proc.stdout and "files were modified by this hook" in proc.stdout, proc.stdout


def run_workflow(example: Example, block: Block, sandbox: Sandbox, argument: str) -> None:
    """A GitHub Actions workflow: its ``run`` steps in order, as written (``<owner>``'s
    repository: a clone of this one, see ``github_redirected``), in a fresh virtualenv on a checkout of the example; the
    ``uses`` steps are GitHub's (listed as not run), and so is a step needing a program that is
    not installed here."""
    if not documented_revs_resolve(example, block):
        return
    workflow = yaml.safe_load(block.source)
    assert workflow["on"] if "on" in workflow else workflow[True]
    checkout = sandbox.root.parent / f"workflow-{example.line}"
    shutil.copytree(REPO / "examples" / "runai_loader", checkout)
    venv_dir = sandbox.root.parent / f"workflow-venv-{example.line}"
    subprocess.run([sys.executable, "-m", "venv", str(venv_dir)], check=True, timeout=300)
    env = github_redirected(sandbox)
    env["PATH"] = f"{venv_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                NOT_RUN.append(f"{line_of(example)}: step `uses: {step['uses']}` (a GitHub action)")
                continue
            script = step["run"]
            programs = {m for m in re.findall(r"(?:^|\|)\s*([\w-]+)", script, re.MULTILINE)}
            missing = sorted(p for p in programs if not shutil.which(p, path=env["PATH"]))
            if missing:
                NOT_RUN.append(f"{line_of(example)}: step `{script.splitlines()[0]}` ({', '.join(missing)} not installed here)")
                continue
            proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=checkout, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert proc.returncode == 0, f"{line_of(example)}: step `{script}` failed:\n{proc.stdout}{proc.stderr}"


RUNNERS = {
    ("console", ""): run_console,
    ("console", "in"): run_console,
    ("console", "copy"): run_console,
    ("console", "venv"): run_console,
    ("python", ""): run_python,
    ("python", "in"): run_python,
    ("python", "pytest-file"): run_pytest_file,
    ("toml", "config"): run_config,
    ("toml", "config-step"): run_config_step,
    ("toml", "pack"): run_pack,
    ("toml", "editor"): run_editor,
    ("json", "editor"): run_editor,
    ("jsonc", "editor"): run_editor,
    ("json", "report"): run_report,
    ("", "tree"): run_tree,
    ("yaml", "pre-commit"): run_pre_commit,
    ("yaml", "workflow"): run_workflow,
}


# ---------------------------------------------------------------------------
# The test: one per document, every block in order


def sandbox_copy(target: Path) -> Path:
    """The repository's files (those git tracks, or the tree without caches) under ``target``."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    names = [n for n in listed.stdout.split("\0") if n] if listed.returncode == 0 else [
        p.relative_to(REPO).as_posix() for p in REPO.rglob("*") if p.is_file() and "cache" not in str(p)]
    for name in names:
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


DOCS = Sybil(parsers=[parse_blocks, parse_directives])


def needs_registry(path: Path) -> bool:
    """A page whose blocks install from the package index (pre-commit's hook environment, a
    workflow's ``pip install``, a console session's in a fresh virtualenv)."""
    return bool(re.search(r"<!-- docs-test: (pre-commit|workflow|venv) -->", path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", [pytest.param(p, marks=[pytest.mark.network] * needs_registry(p)) for p in DOCUMENTS],
                         ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_block_runs_as_written(path: Path, tmp_path: Path) -> None:
    document = DOCS.parse(path)
    (tmp_path / "home").mkdir()
    document.namespace["_sandbox"] = Sandbox(sandbox_copy(tmp_path / "repo"))
    failures = []
    for example in document:
        try:
            example.evaluate()
        except Exception as error:  # every block is run; all failures are reported together
            lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == str(path)]
            where = f" (failed at line {lines[-1]})" if lines else ""
            failures.append(f"{line_of(example)}{where}: {type(error).__name__}: {error}")
    assert not failures, "\n\n".join(failures)


def test_every_link_resolves(tmp_path: Path) -> None:
    """Every relative link and anchor of README.md and docs/ resolves: mkdocs builds them as one
    site (README.md its home page, docs/ below it, as on GitHub) in strict mode with every link
    check on, so a missing page or heading fails."""
    shutil.copytree(REPO / "docs", tmp_path / "site-source" / "docs")
    shutil.copy2(REPO / "README.md", tmp_path / "site-source" / "README.md")
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent("""\
        site_name: bufferlint
        docs_dir: site-source
        site_dir: site
        validation:
          omitted_files: warn
          absolute_links: warn
          unrecognized_links: warn
          anchors: warn
        """), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
