"""``--jobs N`` / ``jobs = N`` (bufferlint.jobs): how many processes a run may use. Any N gives
the report one process gives, byte for byte; ``--jobs 1`` starts no worker for the syntax
check; a bad value is one line naming the option or key, never a traceback."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pytest

from bufferlint import cli, jobs
from bufferlint.analysis.frontend import syntax_check
from bufferlint.fixes import budget, runner
from conftest import REPO, run_cli, write

FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture(autouse=True)
def _default_jobs():
    yield
    jobs.use(None)  # the API sets it per run; leave the next test the default


def run_in_process(root: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["check", "--no-cache", "--no-color", *args])
    finally:
        os.chdir(cwd)
    return code, out.getvalue()


@pytest.fixture
def workers_everywhere(monkeypatch):
    """Worker processes however small the project (the thresholds are sized for large trees),
    and a record of how many each pool was given."""
    monkeypatch.setattr(syntax_check, "PARALLEL_FROM", 1)
    monkeypatch.setattr(syntax_check, "CHUNK", 1)
    monkeypatch.setattr(runner, "PARALLEL_FILES", 1)
    started: dict[str, list[int]] = {"syntax check": [], "fix planning": []}
    original_check, original_plan = syntax_check.SyntaxCheck.__init__, budget.plan_all

    def check_init(self, paths):
        original_check(self, paths)
        started["syntax check"].append(self.pool._max_workers if self.pool is not None else 0)

    def plan_all(jobs_, plan, exhausted, time_budget, workers=1, cancel=None):
        if jobs_:
            started["fix planning"].append(workers)
        return original_plan(jobs_, plan, exhausted, time_budget, workers=workers, cancel=cancel)

    monkeypatch.setattr(syntax_check.SyntaxCheck, "__init__", check_init)
    monkeypatch.setattr(budget, "plan_all", plan_all)
    return started


def _project(tmp_path: Path, fixture: str) -> Path:
    """A fixture project, with two files CPython rejects (their errors come from the workers)."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / fixture, root, ignore=shutil.ignore_patterns("*.expected", "__pycache__"))
    write(root, {"pyproject.toml": "[tool.bufferlint]\n", "broken_a.py": "def f(:\n",
                 "zz/broken_b.py": "x = 1\n  y = 2\n"})
    return root


# The analysis corpus's multi-module project, not the whole corpus: the json runs plan and
# verify fixes, and four runs of all 148 files took about three minutes of the suite.
@pytest.mark.parametrize("fixture", ["analysis/cross_module", "advances", "fixes", "producers"])
@pytest.mark.parametrize("output", ["json", "full"])
def test_every_number_of_processes_gives_the_one_process_report(tmp_path: Path, workers_everywhere, fixture: str,
                                                                output: str) -> None:
    root = _project(tmp_path, fixture)
    one = run_in_process(root, "--format", output, "--jobs", "1")
    assert "broken_a.py" in one[1] and "broken_b.py" in one[1]
    for count in (1, 2, 3):
        for started in workers_everywhere.values():
            started.clear()
        assert run_in_process(root, "--format", output, "--jobs", str(count)) == one
        # each analysis (the fixes' verification analyses again) had count - 1 syntax checkers
        assert set(workers_everywhere["syntax check"]) == {count - 1}
        if output == "json" and fixture in ("analysis/cross_module", "fixes"):  # it plans fixes, by as many workers
            assert set(workers_everywhere["fix planning"]) == {count}


def test_a_large_tree_gives_the_same_bytes_with_one_process_or_two(tmp_path: Path) -> None:
    """Above the syntax check's pool threshold, as the command runs (no test hooks)."""
    files = {f"gen/m{i:03}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(syntax_check.PARALLEL_FROM + 40)}
    files.update({"gen/m007.py": "def f(:\n", "gen/m150.py": "x = 1\n  y = 2\n", "pyproject.toml": "[tool.bufferlint]\n"})
    shutil.copytree(FIXTURES / "analysis" / "cross_module" / "pkg", tmp_path / "pkg")
    write(tmp_path, files)
    for output in ("json", "concise"):
        one = run_cli("check", "--no-cache", "--format", output, "--jobs", "1", ".", cwd=tmp_path)
        two = run_cli("check", "--no-cache", "--format", output, "--jobs", "2", ".", cwd=tmp_path)
        assert one.returncode == two.returncode == 2  # two files that are not Python (and findings)
        assert "m007.py" in one.stdout and "m150.py" in one.stdout and "BL001" in one.stdout
        assert one.stdout == two.stdout


def test_one_process_starts_no_syntax_check_worker(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(syntax_check, "PARALLEL_FROM", 1)
    jobs.use(1)
    assert syntax_check.SyntaxCheck([tmp_path / "a.py", tmp_path / "b.py"]).pool is None
    jobs.use(3)
    check = syntax_check.SyntaxCheck([tmp_path / "a.py", tmp_path / "b.py"])
    assert check.pool is not None and check.pool._max_workers == 2
    check.errors()


def test_the_default_is_every_cpu_this_process_may_use(monkeypatch) -> None:
    """The affinity mask, not the machine's core count: a container or taskset limit counts."""
    monkeypatch.setattr(jobs.os, "sched_getaffinity", lambda pid: {0, 2, 5}, raising=False)
    monkeypatch.setattr(jobs.os, "cpu_count", lambda: 64)
    jobs.use(None)
    assert jobs.available_cpus() == 3 and jobs.processes() == 3
    jobs.use(1)
    assert jobs.processes() == 1
    monkeypatch.delattr(jobs.os, "sched_getaffinity")  # a platform without affinity masks
    assert jobs.available_cpus() == 64


@pytest.mark.parametrize("value", ["0", "-2", '"2"', "true", "1.5", "[2]"])
def test_a_bad_jobs_setting_is_one_line_naming_the_key(tmp_path: Path, value: str) -> None:
    write(tmp_path, {"pyproject.toml": f"[tool.bufferlint]\njobs = {value}\n", "a.py": "x = 1\n"})
    proc = run_cli("check", "a.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert "[tool.bufferlint] jobs: expected a positive whole number of processes" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("value, message", [("0", "--jobs: expected a positive whole number of processes"),
                                            ("-1", "--jobs: expected a positive whole number of processes"),
                                            ("two", "argument --jobs: invalid int value: 'two'")])
def test_a_bad_jobs_option_is_a_usage_error(tmp_path: Path, value: str, message: str) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    proc = run_cli("check", f"--jobs={value}", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_show_settings_shows_the_processes_and_where_they_come_from(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": "x = 1\n"})
    default = run_cli("check", "--show-settings", cwd=tmp_path).stdout
    assert f"jobs = {jobs.available_cpus()}  (every CPU this process may use)" in default
    write(tmp_path, {"pyproject.toml": "[tool.bufferlint]\njobs = 3\n"})
    assert "jobs = 3\n" in run_cli("check", "--show-settings", cwd=tmp_path).stdout
    assert "jobs = 1\n" in run_cli("check", "--show-settings", "--jobs", "1", cwd=tmp_path).stdout  # the option wins
