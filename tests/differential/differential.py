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

COMPILE = os.path.join(ROOT, "out", "neuron-compile")

# argv: reference, ours, rtol, atol. Differences are allowed atol scaled by
# a tenth of the output's largest magnitude (at least 1) plus rtol of the
# reference, as the corpus oracle test (tests/kernels/oracle_test.cc) does.
COMPARE = r'''
import sys, numpy as np
a = np.load(sys.argv[1]).astype(np.float64); b = np.load(sys.argv[2]).astype(np.float64)
rtol, atol = float(sys.argv[3]), float(sys.argv[4])
finite = a[np.isfinite(a)]
scale = max(1.0, 0.1 * np.max(np.abs(finite))) if finite.size else 1.0
ok = a.shape == b.shape and np.allclose(b, a, rtol=rtol, atol=atol * scale, equal_nan=True)
print("ok" if ok else "mismatch shape %s vs %s maxdiff %s" % (a.shape, b.shape,
      np.max(np.abs(a - b)) if a.shape == b.shape and a.size else "-"))
'''


def run_one(name, text, work, rtol=1e-4, atol=1e-4, compile_args=None, seed=1, ref_text=None):
    """The module through neuron-exec (compiled by neuron-compile with
    compile_args first, when given) and through the oracle (ref_text
    instead, when given: the same model with what an option does spelled
    out), on the oracle's random inputs; ("pass"|"skip"|"fail", why)."""
    hlo = os.path.join(work, "m.hlo")
    open(hlo, "w").write(text)
    ref_hlo = hlo
    if ref_text is not None:
        ref_hlo = os.path.join(work, "ref.hlo")
        open(ref_hlo, "w").write(ref_text)
    model = hlo
    if compile_args is not None:
        model = os.path.join(work, "m.neff")
        p = subprocess.run([COMPILE, "compile", hlo, "-q", "-o", model] + compile_args,
                           capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            return "fail", "neuron-compile exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    ref = os.path.join(work, "ref")
    p = subprocess.run([NUMPY_PY, ORACLE, ref_hlo, "--random-inputs", "--seed", str(seed), "--out-dir", ref],
                       capture_output=True, text=True, timeout=60)
    if p.returncode == 3:
        return "skip", "oracle: " + p.stdout.strip()
    if p.returncode != 0:
        return "fail", "oracle error: " + (p.stderr or p.stdout).strip()[-300:]
    ins = sorted(f for f in os.listdir(ref) if f.startswith("in"))
    args = [EXEC, model, "-q", "--output-dir", os.path.join(work, "got")]
    for i in range(len(ins)):
        args += ["-i", "#%d=%s" % (i, os.path.join(ref, "in%d.npy" % i))]
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return "fail", "neuron-exec exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    outs = sorted(f for f in os.listdir(ref) if f.startswith("out"))
    for o in outs:
        c = subprocess.run([NUMPY_PY, "-c", COMPARE, os.path.join(ref, o), os.path.join(work, "got", o),
                            str(rtol), str(atol)], capture_output=True, text=True)
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
