"""The README's first command: the bundled example reproduces SGLang 0.5.16's bug."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "runai_loader"


def run(*args: str, cwd: Path = EXAMPLE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bufferlint", *args], cwd=cwd, capture_output=True, text=True)


def test_example_reports_the_broken_guard_and_the_loader() -> None:
    proc = run("check", ".", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert report["errors"] == []
    found = sorted((f["rule"], f["path"], f["line"], f["function"]) for f in report["findings"])
    assert found == [
        ("BL001", "streamloader/models.py", 15, "streamloader.models:TinyModel.load_weights"),
        ("BL002", "streamloader/executor_utils.py", 4, "streamloader.executor_utils:should_async_load"),
    ]
    bl001 = next(f for f in report["findings"] if f["rule"] == "BL001")
    assert [step["path"] for step in bl001["trace"]][0] == "streamloader/weights.py"
    assert bl001["trace"][-1]["path"] == "streamloader/executor_utils.py"


def test_checking_one_file_still_sees_the_whole_project() -> None:
    """What pre-commit runs: only the changed file is reported, sources come from the others."""
    proc = run("check", "streamloader/models.py")
    assert proc.returncode == 1
    assert proc.stdout.startswith("streamloader/models.py:15:17: BL001 ")
    assert "executor_utils.py:4" not in proc.stdout.splitlines()[0]


def test_fixing_the_guard_silences_both(tmp_path: Path) -> None:
    import shutil

    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    utils = project / "streamloader" / "executor_utils.py"
    utils.write_text(
        utils.read_text().replace(
            '    device = getattr(weight, "device", None)\n',
            '    if getattr(weight, "_sglang_runai_streamer_tensor", False):\n'
            "        return False\n"
            '    device = getattr(weight, "device", None)\n',
            1,
        )
    )
    proc = run("check", ".", cwd=project)
    assert proc.returncode == 0, proc.stdout
