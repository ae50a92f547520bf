#!/usr/bin/env python3
"""Score bufferlint against the blind held-out corpus (stdlib only).

Usage:  PYTHONPATH=. python benchmarks/heldout/score.py [DIR] [project ...]

DIR is a corpus folder (default: the one holding this file, benchmarks/heldout); a first
argument that is a directory without a LABELS.toml of its own is taken as DIR, e.g.
``score.py benchmarks/heldout2``. For every project directory in it (one holding LABELS.toml),
or the named ones, runs
  python -m bufferlint check --no-cache --format json <project>
with cwd = the project directory and PYTHONPATH taken from the environment, matches
findings to labels by (file, line, rule) and prints TP/FP/FN, precision and recall per
rule group, then every mismatch.
"""
import json
import os
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get("BUFFERLINT_PYTHON", sys.executable)
# The check runs in each project's folder: PYTHONPATH entries are made absolute from here, or
# ``PYTHONPATH=.`` would silently run an installed bufferlint instead of this checkout.
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(
    os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p))
GROUPS = [("BL001/BL002", {"BL001", "BL002"}), ("BL003/BL004", {"BL003", "BL004"}), ("BL005", {"BL005"})]


def group_of(rule):
    for g, rules in GROUPS:
        if rule in rules:
            return g
    return "other(" + rule + ")"


def run(project, root=HERE):
    pdir = os.path.join(root, project)
    proc = subprocess.run(
        [PYTHON, "-m", "bufferlint", "check", "--no-cache", "--format", "json", pdir],
        cwd=pdir, capture_output=True, text=True, env=ENV, timeout=900,
    )
    if proc.returncode not in (0, 1):
        return None, f"exit {proc.returncode}: {proc.stderr.strip()[-800:]}"
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        return None, f"bad JSON ({e}): {proc.stdout[:300]!r} {proc.stderr[-300:]!r}"
    found = set()
    for f in report.get("findings", []):
        path = f.get("path", "")
        if os.path.isabs(path):
            path = os.path.relpath(path, pdir)
        found.add((os.path.normpath(path), int(f["line"]), f.get("rule") or f.get("code")))
    errs = report.get("errors") or []
    return found, ("; ".join(map(str, errs)) if errs else None)


def main(argv):
    root = HERE
    if argv and os.path.isdir(argv[0]) and not os.path.isfile(os.path.join(argv[0], "LABELS.toml")):
        root, argv = os.path.abspath(argv[0]), argv[1:]
    projects = argv or sorted(
        d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "LABELS.toml")))
    with ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1))) as pool:
        results = dict(zip(projects, pool.map(lambda p: run(p, root), projects)))
    stats = {g: {"TP": 0, "FP": 0, "FN": 0, "TN": 0} for g, _ in GROUPS}
    mismatches, problems = [], []
    for project in projects:
        with open(os.path.join(root, project, "LABELS.toml"), "rb") as fh:
            sites = tomllib.load(fh).get("site", [])
        found, err = results[project]
        if err:
            problems.append(f"{project}: {err}")
        if found is None:
            found = set()
        labelled = {}
        for s in sites:
            labelled[(os.path.normpath(s["file"]), int(s["line"]), s["rule"])] = bool(s["bug"])
        at_line = {}
        for (f, l, r) in found:
            at_line.setdefault((f, l), []).append(r)
        for key, bug in sorted(labelled.items()):
            f, l, r = key
            st = stats.setdefault(group_of(r), {"TP": 0, "FP": 0, "FN": 0, "TN": 0})
            got = sorted(at_line.get((f, l), [])) or ["nothing"]
            if key in found:
                if bug:
                    st["TP"] += 1
                else:
                    st["FP"] += 1
                    mismatches.append(f"FP  {project}/{f}:{l} {r}: expected safe (no {r}), got {', '.join(got)}")
            else:
                if bug:
                    st["FN"] += 1
                    mismatches.append(f"FN  {project}/{f}:{l} {r}: expected bug, got {', '.join(got)}")
                else:
                    st["TN"] += 1
        for (f, l, r) in sorted(found):
            if (f, l, r) not in labelled:
                st = stats.setdefault(group_of(r), {"TP": 0, "FP": 0, "FN": 0, "TN": 0})
                st["FP"] += 1
                exp = [f"{rr} {'bug' if b else 'safe'}" for (ff, ll, rr), b in labelled.items() if (ff, ll) == (f, l)]
                mismatches.append(f"FP  {project}/{f}:{l} {r}: unlabelled line"
                                  + (f" (labelled there: {', '.join(exp)})" if exp else "") + f", got {r}")
    print(f"{'group':<14}{'TP':>4}{'FP':>4}{'FN':>4}{'TN':>4}{'precision':>11}{'recall':>8}")
    tot = {"TP": 0, "FP": 0, "FN": 0, "TN": 0}
    for g, st in stats.items():
        for k in tot:
            tot[k] += st[k]
        print(_row(g, st))
    print(_row("all", tot))
    print(f"\n{len(mismatches)} mismatch(es):")
    for m in mismatches:
        print("  " + m)
    if problems:
        print("\nproblems:")
        for p in problems:
            print("  " + p)
    return 0


def _row(name, st):
    tp, fp, fn = st["TP"], st["FP"], st["FN"]
    prec = f"{tp / (tp + fp):.2f}" if tp + fp else "n/a"
    rec = f"{tp / (tp + fn):.2f}" if tp + fn else "n/a"
    return f"{name:<14}{tp:>4}{fp:>4}{fn:>4}{st['TN']:>4}{prec:>11}{rec:>8}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
