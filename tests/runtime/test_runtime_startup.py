"""``BUFFERLINT_SHIM``: the start-up hook loads a shim in every Python process, spawned and
forked ``multiprocessing`` workers and ``subprocess`` children included.

The environment is a real one: a virtualenv whose site-packages holds the ``.pth`` file exactly
as the wheel installs it (Python's ``site`` runs it at start-up of every process); bufferlint
and the loader fixture come from ``PYTHONPATH``. Each child imports the flagged loader *after*
start-up (the application's own import) and loads weights with the race harness.
"""

import json
import os
import subprocess
import textwrap

import pytest

pytest.importorskip("torch")
from bufferlint.shimgen import generate_shim  # noqa: E402

from .conftest import FIXTURES, ROOT, packages_path  # noqa: E402

TARGET = "bl_shim_e2e.loader:Model.load_weights"

PROBE = '''
import sys


def probe():
    """What a worker process sees: the shims start-up loaded, the target's state, and how many
    weights its (flagged) loader corrupts when it loads them."""
    loaded = list(sys.modules["bufferlint.runtime.startup"].loaded) if "bufferlint.runtime.startup" in sys.modules else []
    from bl_shim_e2e.loader import Model
    from bufferlint.runtime import status
    from bufferlint.testing import RaceHarness

    race = RaceHarness()
    try:
        model = Model([f"w{i}" for i in range(8)], 64).load_weights(race.weights(8, (64,)), race.executor)
        bad = len(race.corrupted(model.params))
    finally:
        race.close()
    return {"shims": loaded, "status": [[s.target, s.state] for s in status()], "corrupted": bad}
'''

MAIN = '''
import json, multiprocessing, subprocess, sys
from bl_probe import probe

if __name__ == "__main__":
    out = {}
    for method in ("spawn", "fork"):
        with multiprocessing.get_context(method).Pool(1) as pool:
            out[method] = pool.apply(probe)
    child = subprocess.run([sys.executable, "-c", "import json, bl_probe; print(json.dumps(bl_probe.probe()))"],
                           capture_output=True, text=True, check=True)
    out["subprocess"] = json.loads(child.stdout)
    print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def deployment(hooked_python, tmp_path_factory):
    """A virtualenv with the start-up hook installed, and a directory with the shim and probe."""
    app = tmp_path_factory.mktemp("deploy") / "app"
    app.mkdir()
    (app / "bl_deploy_shim.py").write_text(generate_shim({TARGET: ["BL001 bl_shim_e2e/loader.py:21:28"]}))
    (app / "bl_probe.py").write_text(textwrap.dedent(PROBE))
    (app / "main.py").write_text(textwrap.dedent(MAIN))
    return hooked_python, app


def run(deployment, *args, **env):
    python, app = deployment
    environ = {k: v for k, v in os.environ.items() if not k.startswith("BUFFERLINT_")}
    environ["PYTHONPATH"] = os.pathsep.join([str(app), str(FIXTURES), str(ROOT), packages_path])
    environ.update(env)
    proc = subprocess.run([str(python), *(args or [str(app / "main.py")])], capture_output=True, text=True, env=environ, cwd=app)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1]), proc.stderr


def test_shim_is_active_in_spawned_forked_and_subprocess_children(deployment):
    children, _ = run(deployment, BUFFERLINT_SHIM="bl_deploy_shim")
    for method in ("spawn", "fork", "subprocess"):
        assert children[method] == {"shims": ["bl_deploy_shim"], "status": [[TARGET, "installed"]], "corrupted": 0}, method


def test_without_the_variable_children_are_unprotected(deployment):
    children, _ = run(deployment)
    for method in ("spawn", "fork", "subprocess"):
        assert children[method] == {"shims": [], "status": [], "corrupted": 8}, method


def test_shim_given_as_a_file_and_a_broken_shim_is_one_line(deployment):
    python, app = deployment
    report, stderr = run(deployment, "-c", "import json, bl_probe; print(json.dumps(bl_probe.probe()))",
                         BUFFERLINT_SHIM=f"no_such_shim_module,{app / 'bl_deploy_shim.py'}")
    assert report == {"shims": [str(app / "bl_deploy_shim.py")], "status": [[TARGET, "installed"]], "corrupted": 0}
    assert stderr.splitlines() == [
        "bufferlint: BUFFERLINT_SHIM: cannot load shim 'no_such_shim_module': ModuleNotFoundError: "
        f"no module named 'no_such_shim_module' on sys.path or in the working directory {app}"
    ]
