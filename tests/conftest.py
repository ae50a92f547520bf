"""Shared test helpers."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parent.parent


def write(root: Path, files: dict[str, str | bytes]) -> None:
    """Create files under ``root`` from a {relative path: text or bytes} mapping."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """``python -m bufferlint ARGS`` in ``cwd``, importing this checkout."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("BUFFERLINT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "bufferlint", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Print the analysis corpus's known gaps (``# todo-expect`` misses, ``# known-fp`` false
    alarms) on every run, so they stay visible."""
    import re

    fixtures = REPO / "tests" / "fixtures"
    gaps = {"todo-expect": [], "known-fp": []}
    for path in sorted(fixtures.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for kind, rule in re.findall(r"#\s*(todo-expect|known-fp):\s*(BL\d{3})", line):
                gaps[kind].append(f"{path.relative_to(fixtures).as_posix()}:{number}: {rule}")
    terminalreporter.write_sep(
        "-", f"known analysis gaps: {len(gaps['todo-expect'])} missed (todo-expect), {len(gaps['known-fp'])} false alarms (known-fp)"
    )
    for kind, lines in gaps.items():
        for line in lines:
            terminalreporter.write_line(f"  {kind}: {line}")
    not_run = [*_docs_not_run(), *getattr(config, "_docs_not_run_by_workers", [])]
    if not_run:  # documentation blocks that cannot run here, and why
        terminalreporter.write_sep("-", f"documentation blocks not run: {len(not_run)}")
        for line in not_run:
            terminalreporter.write_line(f"  {line}")


def _docs_not_run() -> list[str]:
    """The documentation blocks this process's ``test_docs`` did not run."""
    docs = sys.modules.get("test_docs")
    return list(docs.NOT_RUN) if docs is not None else []


# Under pytest-xdist (the ``dev`` extra; ``-n`` in pyproject's addopts) the tests run in
# worker processes and the summary is printed by the controller: each worker sends what its
# ``test_docs`` did not run.
def pytest_sessionfinish(session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["docs_not_run"] = _docs_not_run()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    lines = getattr(node, "workeroutput", {}).get("docs_not_run", [])
    collected = node.config.__dict__.setdefault("_docs_not_run_by_workers", [])
    collected.extend(line for line in lines if line not in collected)


def pytest_collection_modifyitems(config, items) -> None:
    """Keep the tests that share an expensive fixture on one worker (``--dist loadgroup``):
    those of a module with a module-scoped fixture of ours, and all users of one of our
    session-scoped fixtures (a virtualenv with the start-up hook, pre-commit's hook
    environment, the downloaded sglang wheels), so each is built once per run, not once per
    worker. Other tests go to whichever worker is free."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    resources = {}
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        shared = []
        for name, definitions in (info.name2fixturedefs.items() if info is not None else ()):
            ours = [d for d in definitions if str(d.baseid).startswith("tests")]
            if ours and ours[-1].scope == "session":
                shared.append(f"session:{name}")
            elif ours and ours[-1].scope in ("module", "package", "class"):
                shared.append(f"module:{item.nodeid.split('::')[0]}")
        resources[item.nodeid] = shared
        for key in shared[1:]:
            parent[find(key)] = find(shared[0])
    for item in items:
        if resources[item.nodeid]:
            item.add_marker(pytest.mark.xdist_group(find(resources[item.nodeid][0])))


# ---------------------------------------------------------------------------
# No skip goes unnoticed in CI
#
# Tests of real-world claims (marked ``network``: real SGLang wheels, real pre-commit;
# ``runtime``: torch, the real runai-model-streamer) skip on a developer machine without
# the package or the network. In CI (``CI=true``, or ``BUFFERLINT_STRICT_SKIPS=1`` as
# ``.ci/run`` sets) every skip is a failure, of a test or of a whole module at import, unless
# the test is on the ``allowed_skips`` list of the pytest configuration (pyproject.toml), one
# ``<node id> = <why it may skip in CI>`` a line: CI installs every extra, so an unexpected
# skip there means a claim went untested. Anywhere, a skip must say why.

REAL_WORLD_MARKERS = ("network", "runtime")


def pytest_addoption(parser) -> None:
    parser.addini("allowed_skips", type="linelist", default=[],
                  help="tests that may skip in CI: '<node id> = <why>' a line (see tests/conftest.py)")


def strict_skips() -> bool:
    return os.environ.get("BUFFERLINT_STRICT_SKIPS") == "1" or os.environ.get("CI", "").lower() in ("true", "1")


def allowed_skips(config) -> dict[str, str]:
    """``allowed_skips`` as {node id: why}; a line without a reason is a configuration error."""
    allowed = {}
    for line in config.getini("allowed_skips"):
        node_id, _, why = line.partition(" = ")
        if not why.strip():
            raise pytest.UsageError(f"allowed_skips: {line!r} does not say why (write '<node id> = <why>')")
        allowed[node_id.strip()] = why.strip()
    return allowed


def _skip_reason(report) -> str:
    return report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)


def _fail_skip(report, what: str) -> None:
    report.longrepr = f"{what} skipped in CI, where it must run: {_skip_reason(report)}"
    report.outcome = "failed"


def _unexplained(report) -> bool:
    """pytest's own reason for a bare ``pytest.skip()`` / ``skip`` mark says nothing."""
    return _skip_reason(report).removeprefix("Skipped: ").strip() in ("", "unconditional skip")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    if _unexplained(report):
        report.longrepr = "a skip must say why (give pytest.skip / the skip mark a reason)"
        report.outcome = "failed"
    elif not strict_skips() or item.nodeid in allowed_skips(item.config):
        return
    elif any(item.get_closest_marker(m) for m in REAL_WORLD_MARKERS):
        _fail_skip(report, "real-world test")
    elif "could not import" in _skip_reason(report):  # pytest.importorskip inside a test
        _fail_skip(report, "test needing a package")
    else:
        _fail_skip(report, "test not on allowed_skips")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and strict_skips() and isinstance(collector, pytest.Module)
            and collector.nodeid not in allowed_skips(collector.config)):
        _fail_skip(report, "test module")


@pytest.fixture(scope="session")
def sglang_wheel(request):
    """``read(version, member) -> bytes``: a file of the real ``sglang==version`` wheel,
    downloaded once with ``pip download --no-deps`` into pytest's cache (``.pytest_cache``).
    A test using it is marked ``network``; a failed download fails it."""
    cache = Path(request.config.cache.mkdir("sglang-wheels"))

    def read(version: str, member: str) -> bytes:
        wheels = sorted(cache.glob(f"sglang-{version}-*.whl"))
        if not wheels:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
                 f"sglang=={version}", "-d", str(cache)],
                check=True, timeout=900,
            )
            wheels = sorted(cache.glob(f"sglang-{version}-*.whl"))
        with zipfile.ZipFile(wheels[0]) as archive:
            return archive.read(member)

    return read
