#!/usr/bin/env python3
"""Differential test: random HLO (hlo_gen.py) run by out/neuron-exec and by the
numpy oracle (../shared/oracle/hlo_ref.py); outputs compared with tolerances.

Usage: differential.py [--seeds N] [--first S] [--replay FILE.hlo ...]
Prints one line per module and a last line "N passed, N failed". A disagreement
writes its module to out/differential-failures/.
"""
import argparse, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_gen

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ORACLE = os.path.join(ROOT, "..", "shared", "oracle", "hlo_ref.py")
EXEC = os.path.join(ROOT, "out", "neuron-exec")
NUMPY_PY = "/usr/bin/python3"

COMPARE = r'''
import sys, numpy as np
a = np.load(sys.argv[1]).astype(np.float64); b = np.load(sys.argv[2]).astype(np.float64)
ok = a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True)
print("ok" if ok else "mismatch shape %s vs %s maxdiff %s" % (a.shape, b.shape,
      np.max(np.abs(a - b)) if a.shape == b.shape and a.size else "-"))
'''


def run_one(name, text, work):
    hlo = os.path.join(work, "m.hlo")
    open(hlo, "w").write(text)
    ref = os.path.join(work, "ref")
    p = subprocess.run([NUMPY_PY, ORACLE, hlo, "--random-inputs", "--seed", "1", "--out-dir", ref],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 3:
        return "skip", "oracle: " + p.stdout.strip()
    if p.returncode != 0:
        return "fail", "oracle error: " + (p.stderr or p.stdout).strip()[-300:]
    ins = sorted(f for f in os.listdir(ref) if f.startswith("in"))
    args = [EXEC, hlo, "-q", "--output-dir", os.path.join(work, "got")]
    for i in range(len(ins)):
        args += ["-i", "#%d=%s" % (i, os.path.join(ref, "in%d.npy" % i))]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return "fail", "neuron-exec exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    outs = sorted(f for f in os.listdir(ref) if f.startswith("out"))
    for o in outs:
        c = subprocess.run([NUMPY_PY, "-c", COMPARE, os.path.join(ref, o), os.path.join(work, "got", o)],
                           capture_output=True, text=True)
        if c.stdout.strip() != "ok":
            return "fail", "%s %s" % (o, (c.stdout + c.stderr).strip()[-300:])
    return "pass", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--replay", nargs="*", default=[])
    a = ap.parse_args()
    cases = [("regression %s" % os.path.basename(f), open(f).read()) for f in a.replay]
    cases += [("seed %d" % s, hlo_gen.generate(s)) for s in range(a.first, a.first + a.seeds)]
    faildir = os.path.join(ROOT, "out", "differential-failures")
    passed = failed = skipped = 0
    for name, text in cases:
        with tempfile.TemporaryDirectory() as work:
            try:
                res, why = run_one(name, text, work)
            except subprocess.TimeoutExpired as e:
                res, why = "fail", "timeout: %s" % e.cmd[0]
        if res == "pass":
            passed += 1
            print("differential %s: ok" % name)
        elif res == "skip":
            skipped += 1
            print("differential %s: skipped (%s)" % (name, why))
        else:
            failed += 1
            os.makedirs(faildir, exist_ok=True)
            path = os.path.join(faildir, name.replace(" ", "_") + ".hlo")
            open(path, "w").write(text)
            print("FAILED differential %s: %s (module: %s)" % (name, why, path))
    if skipped:
        print("NOTICE: %d modules the oracle cannot evaluate (not counted)" % skipped)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
