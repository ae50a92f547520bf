"""Proof on SGLang's own code: the sglang 0.5.16 wheel's DeepSeek weight loader, fed by its
real ``runai_safetensors_weights_iterator`` on the real RunAI streamer, with the shim that
``bufferlint shim`` generates for the whole wheel.

Nothing from SGLang is stored in this repository: the wheel is downloaded (``pip download
--no-deps``) into a cache directory, the whole tree is analysed there, and three of its files
are extracted unmodified to run (see ``sglang_real/run_loader.py`` for them and for the stubbed
imports). The streamer is runai-model-streamer 0.15.9, the last release line SGLang 0.5.16
was used with that has no ``owned`` parameter: it reuses its buffer whenever the checkpoint
is larger than ``RUNAI_STREAMER_MEMORY_LIMIT`` (0 here: one tensor-sized slot), which is the
configuration that corrupted weights in production. Each run is its own process.
"""

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.network
torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).parent / "sglang_real" / "run_loader.py"
CACHE = Path(tempfile.gettempdir()) / "bufferlint-sglang-real"
SGLANG, STREAMER = "0.5.16", "0.15.9"
RUN_FILES = [  # taken unmodified from the wheel to run
    "sglang/srt/model_loader/utils.py",
    "sglang/srt/model_loader/weight_utils.py",
    "sglang/srt/models/deepseek_common/__init__.py",
    "sglang/srt/models/deepseek_common/deepseek_weight_loader.py",
]
DEEPSEEK = "sglang.srt.models.deepseek_common.deepseek_weight_loader:DeepseekV2WeightLoaderMixin.do_load_weights"
N, NUMEL = 8, 256 * 1024


def pip(*args):
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args], check=True)


@pytest.fixture(scope="module")
def wheel_tree():
    """The whole wheel unpacked (for the analysis) and the files that run, in another folder."""
    tree, run = CACHE / f"sglang-{SGLANG}", CACHE / f"sglang-{SGLANG}-run"
    if not (tree / "sglang").is_dir():
        pip("download", "--no-deps", f"sglang=={SGLANG}", "-d", str(CACHE))
        with zipfile.ZipFile(next(CACHE.glob(f"sglang-{SGLANG}-*.whl"))) as wheel:
            wheel.extractall(tree, [n for n in wheel.namelist() if n.startswith("sglang/")])
    for name in RUN_FILES:
        (run / name).parent.mkdir(parents=True, exist_ok=True)
        (run / name).write_bytes((tree / name).read_bytes())
    return tree, run


@pytest.fixture(scope="module")
def streamer():
    target = CACHE / f"runai-model-streamer-{STREAMER}"
    if not (target / "runai_model_streamer").is_dir():
        pip("install", "--no-deps", "--target", str(target), f"runai-model-streamer=={STREAMER}")
    return target


@pytest.fixture(scope="module")
def shim(wheel_tree, tmp_path_factory):
    """`bufferlint shim` on the whole wheel, as an operator would run it."""
    tree, _ = wheel_tree
    path = tmp_path_factory.mktemp("shim") / "sglang_0516_shim.py"
    proc = subprocess.run(
        [sys.executable, "-m", "bufferlint", "shim", str(tree / "sglang"), "-o", str(path)],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp("ckpt") / "model.safetensors"
    tensors = {f"model.layers.{i}.mlp.down_proj.weight": torch.full((NUMEL,), float(i)) for i in range(N)}
    safetensors_torch.save_file(tensors, str(path))
    return path


def load(wheel_tree, streamer, checkpoint, mode, *extra, **env):
    _, run = wheel_tree
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("BUFFERLINT_", "RUNAI_STREAMER_"))}
    environ.update(PYTHONPATH=os.pathsep.join([str(streamer), str(ROOT)]), RUNAI_STREAMER_MEMORY_LIMIT="0",
                   RUNAI_STREAMER_LOG_LEVEL="ERROR", **env)
    proc = subprocess.run([sys.executable, str(RUNNER), str(run / "sglang"), str(checkpoint), mode, *map(str, extra)],
                          capture_output=True, text=True, env=environ)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_shim_for_the_whole_wheel_names_the_deepseek_loader(shim):
    text = shim.read_text()
    assert f"    {DEEPSEEK!r}," in text
    assert "# BL001 sglang/srt/models/deepseek_common/deepseek_weight_loader.py:" in text


def test_unpatched_real_loader_corrupts_streamed_weights(wheel_tree, streamer, checkpoint):
    result = load(wheel_tree, streamer, checkpoint, "unpatched")
    # every tensor but the last was refilled before the held worker copied it
    assert result["corrupted"] == [f"model.layers.{i}.mlp.down_proj.weight" for i in range(N - 1)]


def test_generated_shim_makes_the_real_loader_safe(wheel_tree, streamer, checkpoint, shim):
    result = load(wheel_tree, streamer, checkpoint, "shim", shim)
    assert result["corrupted"] == []
    # loaded before any SGLang module: every target pending (the shim imports none of them)
    before = dict(result["states_before_import"])
    assert DEEPSEEK in before and set(before.values()) == {"pending"}
    after = dict(result["states_after"])
    assert after.pop(DEEPSEEK) == "installed"
    # the other loaders of the wheel (DeepSeek-V4, LongCat-Flash, ...) are not importable in
    # this environment: they stay pending and do not stop the DeepSeek loader's patch
    assert after and set(after.values()) == {"pending"}


def test_sanitizer_reports_the_reuse_on_the_real_loader(wheel_tree, streamer, checkpoint):
    result = load(wheel_tree, streamer, checkpoint, "sanitize", BUFFERLINT_SANITIZE="1")
    assert result["error"].startswith("BufferReuseError: ")
    assert "between submit and task start" in result["error"]
