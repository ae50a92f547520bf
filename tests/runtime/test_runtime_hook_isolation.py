"""The start-up hook cannot take a process down or disturb it: whatever a shim does at import,
the application runs, keeps its own modules and its stdout, and a shim that starts Python
processes while it loads does not recurse. Each test runs a real interpreter whose
site-packages holds the hook's ``.pth`` as the wheel installs it."""

import os
import subprocess
import textwrap

import pytest

from .conftest import ROOT

APP = "print('APP OK')"


def start(python, code, cwd, stderr=subprocess.PIPE, **env):
    """Run ``python -c code`` in ``cwd`` with bufferlint importable and ``env`` set."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BUFFERLINT_") and k != "PYTHONPATH"}
    environ["PYTHONPATH"] = str(ROOT)
    environ.update(env)
    return subprocess.run([str(python), "-c", code], stdout=subprocess.PIPE, stderr=stderr, env=environ, cwd=cwd,
                          timeout=120)


@pytest.mark.parametrize("body, name", [
    ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    ("raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    ("raise RuntimeError('shim broke')\n", "RuntimeError: shim broke"),
])
def test_nothing_a_shim_raises_stops_the_application(hooked_python, tmp_path, body, name):
    shim = tmp_path / "bad_shim.py"
    shim.write_text(body)
    proc = start(hooked_python, APP, tmp_path, BUFFERLINT_SHIM=str(shim))
    assert proc.returncode == 0 and proc.stdout.decode() == "APP OK\n"
    assert proc.stderr.decode().splitlines() == [f"bufferlint: BUFFERLINT_SHIM: cannot load shim {str(shim)!r}: {name}"]


def test_a_shim_named_like_a_module_does_not_replace_it(hooked_python, tmp_path):
    (tmp_path / "shims").mkdir()
    shim = tmp_path / "shims" / "json.py"
    shim.write_text("from bufferlint.runtime import patch\npatch('never_imported_pkg.mod:loader')\n")
    code = ("import json, sys; from bufferlint.runtime import status, startup; "
            "print(json.dumps([s.target for s in status()]), startup.loaded == [sys.argv[0]] or startup.loaded)")
    proc = start(hooked_python, code.replace("sys.argv[0]", repr(str(shim))), tmp_path, BUFFERLINT_SHIM=str(shim))
    assert proc.stdout.decode() == '["never_imported_pkg.mod:loader"] True\n', proc.stderr.decode()
    assert str(tmp_path / "shims") not in start(hooked_python, "import sys; print(sys.path)", tmp_path,
                                                  BUFFERLINT_SHIM=str(shim)).stdout.decode()


def test_with_stderr_closed_the_hook_says_nothing_on_stdout(hooked_python, tmp_path):
    proc = subprocess.run([str(hooked_python), "-c", APP], stdout=subprocess.PIPE, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "BUFFERLINT_SHIM": str(tmp_path / "missing.py")},
                          preexec_fn=lambda: os.close(2))
    assert proc.returncode == 0 and proc.stdout.decode() == "APP OK\n"


@pytest.mark.parametrize("value, message", [
    ("{dir}", "IsADirectoryError: {dir} is a directory; a shim is a .py file or a module name"),
    ("{dir}/missing.py", "FileNotFoundError: no such file: {dir}/missing.py"),
    ("missing_shim_module", "ModuleNotFoundError: no module named 'missing_shim_module' on sys.path or in the "
                            "working directory {dir}"),
])
def test_a_bad_value_is_named_precisely(hooked_python, tmp_path, value, message):
    value = value.format(dir=tmp_path)
    proc = start(hooked_python, APP, tmp_path, BUFFERLINT_SHIM=value)
    assert proc.stdout.decode() == "APP OK\n"
    assert proc.stderr.decode() == f"bufferlint: BUFFERLINT_SHIM: cannot load shim {value!r}: {message.format(dir=tmp_path)}\n"


def test_the_documented_module_name_form_loads_from_the_working_directory(hooked_python, tmp_path):
    (tmp_path / "bufferlint_shim.py").write_text("LOADED = True\n")
    proc = start(hooked_python, "import sys; print(sys.modules['bufferlint_shim'].LOADED)", tmp_path,
                 BUFFERLINT_SHIM="bufferlint_shim")
    assert proc.stdout.decode() == "True\n" and proc.stderr == b""


RECURSIVE_SHIM = '''
import os, subprocess, sys
with open({log!r}, "a") as log:
    log.write(os.environ.get("WHO", "app") + "\\n")
if os.environ.get("WHO", "app") == "app":  # the shim starts a Python process while it loads
    subprocess.run([sys.executable, "-c", "pass"], env={{**os.environ, "WHO": "started by the shim"}}, check=True)
'''


@pytest.mark.parametrize("reentry, runs", [(None, ["app"]), ("1", ["app", "started by the shim"])])
def test_children_started_while_a_shim_loads_do_not_load_it_again(hooked_python, tmp_path, reentry, runs):
    log = tmp_path / "runs.log"
    shim = tmp_path / "recursive_shim.py"
    shim.write_text(textwrap.dedent(RECURSIVE_SHIM.format(log=str(log))))
    env = {"BUFFERLINT_SHIM": str(shim), **({"BUFFERLINT_SHIM_REENTRY": reentry} if reentry else {})}
    later = ("import os, subprocess, sys; subprocess.run([sys.executable, '-c', 'pass'], check=True, "
             "env={**os.environ, 'WHO': 'started by the application'})")
    proc = start(hooked_python, later, tmp_path, **env)
    assert proc.returncode == 0, proc.stderr.decode()
    # the application's own child, started after loading, loads the shim as usual
    assert log.read_text().splitlines() == runs + ["started by the application"]
