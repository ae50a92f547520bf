"""The command skips freeing its last analysis (``bufferlint.lifetime``): nothing else keeps
anything, the output is complete and the exit code is the command's."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "analysis" / "aliasing.py"


# Analyses the fixture once (``analyse()`` again), with a weak reference to each analysis in ``made``.
ANALYSES = f"""
import weakref
from pathlib import Path
from bufferlint.analysis.whole import program
from bufferlint.packs import builtin_vocabulary
made = []
original = program.ProjectAnalysis.run
def run(self):
    made.append(weakref.ref(self))
    return original(self)
program.ProjectAnalysis.run = run
path = Path({str(FIXTURE)!r})
def analyse():
    program.analyze(path.parent, [path], [path], builtin_vocabulary())
analyse()
"""


def _python(code: str) -> subprocess.CompletedProcess:
    # Buffered output, as users run the command (PYTHONUNBUFFERED would hide a missing flush).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120, env=env)


def test_the_api_keeps_nothing() -> None:
    proc = _python(ANALYSES + "print(made[0]() is None)\n")
    assert proc.stdout.split() == ["True"], proc.stderr


def test_the_api_keeps_no_module_of_its_analysis() -> None:
    """Nor any module's tree: a memo keyed weakly by a node (the guard judge's marker text)
    that held its module strongly kept every analysed tree for the process's life (a JSON
    run, which analyses again to verify fixes, grew by each analysis: 2.4 GiB on sglang)."""
    proc = _python(ANALYSES.replace(
        "    return original(self)",
        "    result = original(self)\n"
        "    modules.extend(weakref.ref(info.module) for info in self.program.index.functions.values())\n"
        "    return result",
    ).replace("made = []", "made = []\nmodules = []") + "print(len(modules) > 0, all(m() is None for m in modules))\n")
    assert proc.stdout.split() == ["True", "True"], proc.stderr


def test_the_command_keeps_only_its_last_analysis() -> None:
    """Each new analysis (a ``--fix`` round verifies by analysing again) lets the last go."""
    proc = _python(
        "from bufferlint import lifetime\nlifetime.exit_frees_memory()\n" + ANALYSES
        + "print(made[0]() is not None)\nanalyse()\nprint(made[0]() is None, made[1]() is not None)\n"
    )
    assert proc.stdout.split() == ["True", "True", "True"], proc.stderr


def test_exit_now_flushes_the_output_and_keeps_the_code() -> None:
    proc = _python("""
        import sys
        from bufferlint import lifetime
        for line in range(1000):  # a few KiB, held in the pipe's buffer until flushed
            print(line)
        sys.stderr.write("done")
        lifetime.exit_now(3)
        print("not reached")
    """)
    assert proc.returncode == 3
    assert proc.stdout.split() == [str(line) for line in range(1000)] and proc.stderr == "done"


def test_the_language_server_keeps_nothing(monkeypatch) -> None:
    """It runs on after each analysis: only one-shot commands may skip freeing."""
    from bufferlint import cli, entry, lifetime

    said = []
    monkeypatch.setattr(entry, "pin_hash_seed", lambda: None)
    monkeypatch.setattr(lifetime, "exit_frees_memory", lambda: said.append(True))
    monkeypatch.setattr(lifetime, "exit_now", lambda code: code)
    monkeypatch.setattr(cli, "main", lambda: 0)
    for argv, expected in ((["bufferlint", "server"], []), (["bufferlint", "check", "src"], [True])):
        said.clear()
        monkeypatch.setattr(sys, "argv", argv)
        assert entry.main() == 0
        assert said == expected, argv
