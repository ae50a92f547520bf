"""The progress line: drawn on a real terminal (a pseudo-terminal here, not a mock) once a
run takes more than a moment, erased at the end; never on a pipe, with ``-q``, or in the
report."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bufferlint.progress as progress_module
from bufferlint.progress import Progress
from conftest import REPO, write

ERASE = "\r\x1b[K"


def read_all(fd: int) -> str:
    """Everything written to a pseudo-terminal until its other side is closed."""
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the slave side is closed
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def on_terminal(work) -> str:
    """What a Progress (no delay) writes to a pseudo-terminal while ``work(progress)`` runs."""
    master, slave = pty.openpty()
    try:
        with open(slave, "w", encoding="utf-8", closefd=False) as stream:
            with Progress(stream, delay=0) as progress:
                work(progress)
            os.close(slave)
            slave = -1
        return read_all(master)
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)


def test_drawn_on_a_terminal_and_erased_at_the_end() -> None:
    def work(progress: Progress) -> None:
        assert progress.callback is not None
        progress.callback(3, 17)
        progress.callback(4, 18)  # within 1/RATE of the first: not drawn

    output = on_terminal(work)
    assert output == f"{ERASE}bufferlint: analysing: 3 files parsed, 17 functions analysed (0 s){ERASE}"


def test_phase_totals_plurals_and_a_slow_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """The line says the phase and done/total, "1 file" (never "1 files"), and names a
    function whose analysis has taken more than SLOW_FUNCTION seconds."""
    clock = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: clock[0])
    progress = Progress(io.StringIO(), delay=0)
    progress.phase("analysing", 4719)
    progress.update(427, 1)
    assert progress.line(clock[0]) == "bufferlint: analysing: 427 of 4,719 files parsed, 1 function analysed (0 s)"
    progress.phase("planning fixes for 3 findings")
    progress.update(1, 2)
    progress.function_started("pkg.loader:load_weights")
    clock[0] += 1
    assert progress.line(clock[0]) == "bufferlint: planning fixes for 3 findings: 1 file parsed, 2 functions analysed (1 s)"
    clock[0] += 4
    assert progress.line(clock[0]).endswith("(5 s); in pkg.loader:load_weights for 5 s")
    progress.update(1, 3)  # that function is done
    assert progress.line(clock[0]).endswith("(5 s)")


def test_the_line_moves_while_nothing_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long step that reports nothing (one slow function) still redraws every TICK."""
    monkeypatch.setattr(progress_module, "TICK", 0.05)

    def work(progress: Progress) -> None:
        progress.function_started("pkg.m:f")
        time.sleep(0.5)

    output = on_terminal(work)
    assert output.count(f"{ERASE}bufferlint: analysing: 0 files parsed") >= 3
    assert output.endswith(ERASE)


def test_nothing_before_the_delay() -> None:
    master, slave = pty.openpty()
    try:
        with open(slave, "w", encoding="utf-8", closefd=False) as stream:
            with Progress(stream, delay=3600) as progress:
                progress.callback(3, 17)
        ready, _, _ = select.select([master], [], [], 0.2)
        assert ready == []  # nothing was written
    finally:
        os.close(master)
        os.close(slave)


def test_not_on_a_pipe_or_a_file(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    with open(write_end, "w") as pipe, open(tmp_path / "err.txt", "w") as file:
        for stream in (pipe, file):
            progress = Progress(stream, delay=0)
            assert progress.callback is None  # the analysis is not even called back
    os.close(read_end)


def big_project(top: Path, modules: int = 40, functions: int = 25) -> None:
    """A project whose analysis takes a couple of seconds: many functions over a stream."""
    files = {
        "pyproject.toml": "",
        "pkg/__init__.py": "",
        "pkg/weights.py": (
            "from runai_model_streamer import SafetensorsStreamer\n\n\ndef stream(files):\n"
            "    with SafetensorsStreamer() as s:\n        s.stream_files(files)\n        yield from s.get_tensors()\n"
        ),
    }
    for m in range(modules):
        body = ["from pkg.weights import stream\n"]
        for f in range(functions):
            body.append(
                f"\n\ndef load_{f}(files, params):\n    for name, w in stream(files):\n"
                "        params.append(w.sum())\n    return len(params)\n"
            )
        files[f"pkg/m{m}.py"] = "".join(body)
    write(top, files)


def run_on_terminal(args: list[str], cwd: Path) -> tuple[str, str, int]:
    """``bufferlint ARGS`` with stderr on a pseudo-terminal: (stdout, terminal, exit code)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm"}
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "bufferlint", *args], cwd=cwd, env=env,
                                stdout=subprocess.PIPE, stderr=slave, text=True)
        os.close(slave)
        slave = -1
        terminal = read_all(master)  # drained while it runs, so the child never blocks
        stdout = proc.stdout.read()
        proc.wait(timeout=120)
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)
    return stdout, terminal.replace("\r\n", "\n"), proc.returncode


@pytest.fixture(scope="module")
def slow_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("slow")
    big_project(top)
    return top


@pytest.fixture(scope="module")
def slower_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three times ``slow_project``: a run that outlasts the progress delay with a second to
    spare on a fast machine (``slow_project``'s analysis came within 0.1 s of it)."""
    top = tmp_path_factory.mktemp("slower")
    big_project(top, modules=120)
    return top


def test_a_long_run_shows_progress_on_its_terminal_and_erases_it(slower_project: Path) -> None:
    stdout, terminal, code = run_on_terminal(["check", "--format", "json", "."], slower_project)
    assert code == 0
    assert f"{ERASE}bufferlint: " in terminal and " files parsed, " in terminal and " functions analysed (" in terminal
    last = terminal.rindex(f"{ERASE}bufferlint: ")
    assert terminal.index(ERASE, last + 1) < len(terminal)  # the last line drawn is erased
    assert "\x1b" not in stdout and "files parsed" not in stdout  # the report is untouched
    assert stdout.startswith("{")


def test_quiet_runs_show_no_progress(slow_project: Path) -> None:
    stdout, terminal, code = run_on_terminal(["check", "-q", "."], slow_project)
    assert code == 0 and terminal == "" and stdout == ""


def test_no_progress_when_stderr_is_not_a_terminal(slow_project: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm"}
    done = subprocess.run([sys.executable, "-m", "bufferlint", "check", "."], cwd=slow_project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert "\x1b" not in done.stderr and "files parsed" not in done.stderr
    assert done.stderr == "All checks passed (42 files).\n"
