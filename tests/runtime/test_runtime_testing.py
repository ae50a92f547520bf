import os
import subprocess
import sys
import textwrap
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from bufferlint.testing import HeldExecutor, HoldTimeout

ROOT = Path(__file__).resolve().parents[2]


def test_held_executor_holds_until_release():
    ex = HeldExecutor(max_workers=2)
    order = []
    futures = [ex.submit(order.append, i) for i in range(4)]
    time.sleep(0.05)
    assert ex.held and order == [] and not any(f.done() for f in futures)
    ex.release()
    for f in futures:
        f.result(timeout=5)
    assert sorted(order) == [0, 1, 2, 3] and not ex.held
    ex.shutdown()


def test_held_executor_times_out_instead_of_hanging():
    ex = HeldExecutor(hold_timeout=0.1)
    assert ex.submit(lambda: 1).result(timeout=5) == 1
    assert ex.timed_out
    ex.shutdown()


def test_race_harness_reports_timeout():
    torch = pytest.importorskip("torch")
    from bufferlint.testing import RaceHarness

    race = RaceHarness(hold_timeout=0.1)
    params = {}
    for name, w in race.weights(2, (4,)):
        params[name] = torch.empty(4)
        race.executor.submit(params[name].copy_, w).result()  # waits inside the loop
    with pytest.raises(HoldTimeout):
        race.assert_intact(params)
    race.close()


README_EXAMPLE = '''
import torch
from bufferlint.runtime import GuardedExecutor

def load(weights, executor, params):      # SGLang's pattern: hand each view to a worker
    futures = [executor.submit(params[name].copy_, w) for name, w in weights]
    for f in futures:
        f.result()

def test_loader_consumes_views_before_reuse(bufferlint_race):
    params = {f"w{i}": torch.empty(1024) for i in range(8)}
    load(bufferlint_race.weights(8), bufferlint_race.executor, params)
    bufferlint_race.assert_intact(params)   # fails: 8 of 8 tensors corrupted

def test_guarded_loader_is_safe(bufferlint_race):
    params = {f"w{i}": torch.empty(1024) for i in range(8)}
    load(bufferlint_race.weights(8), GuardedExecutor(bufferlint_race.executor), params)
    bufferlint_race.assert_intact(params)

def test_held_executor_fixture(held_executor):
    f = held_executor.submit(lambda: 42)
    assert not f.done()
    held_executor.release()
    assert f.result() == 42
'''


def test_pytest_plugin_reproduces_the_sglang_bug(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "test_example.py").write_text(textwrap.dedent(README_EXAMPLE))
    registered = any(ep.value == "bufferlint.testing.plugin" for ep in entry_points(group="pytest11"))
    args = [] if registered else ["-p", "bufferlint.testing.plugin"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "test_example.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert "1 failed, 2 passed" in out.stdout, out.stdout + out.stderr
    assert "8 of 8 tensors corrupted" in out.stdout
