#!/usr/bin/env python3
"""Each precision against the oracle: one layer of a model (a dot, a bias,
a tanh-GELU chain and a row softmax) in f32, bf16 and f16, compiled the ways
users compile (defaults, where fused bf16/f16 chains compute on f32 values;
--disable-mixed-precision-accumulation, where every op rounds; f32 with
--auto-cast matmult to bf16 and fp16), run by neuron-exec on the oracle's
random inputs and compared with the oracle (../shared/oracle/hlo_ref.py)
within the corpus oracle test's tolerance for the result type: 2 ulps
relative, plus 2 ulps of a tenth of the output's scale. For auto-cast the
oracle evaluates the model with the cast spelled out (the dot's operands
converted, an f32 product), so the comparison is at f32's tolerance.

Usage: precision.py [--seeds N]   Last line: "N passed, N failed".
"""
import argparse, os, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential

# (rtol, atol) per element type: 2 ulps, as tests/kernels/oracle_test.cc.
TOLERANCE = {"f32": (1e-4, 1e-5), "bf16": (1 / 64, 1 / 128), "f16": (1 / 512, 1 / 1024)}

LAYER = """HloModule layer_@
add_@ {
  a = @[] parameter(0)
  b = @[] parameter(1)
  ROOT s = @[] add(a, b)
}
max_@ {
  a = @[] parameter(0)
  b = @[] parameter(1)
  ROOT m = @[] maximum(a, b)
}
ENTRY main {
  x = @[32,64] parameter(0)
  w = @[64,48] parameter(1)
  b = @[48] parameter(2)
  d = @[32,48] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = @[32,48] broadcast(b), dimensions={1}
  h = @[32,48] add(d, bb)
  c0 = @[] constant(0.044715)
  c1 = @[] constant(0.7978845608)
  one = @[] constant(1)
  half = @[] constant(0.5)
  k0 = @[32,48] broadcast(c0), dimensions={}
  k1 = @[32,48] broadcast(c1), dimensions={}
  k2 = @[32,48] broadcast(one), dimensions={}
  k3 = @[32,48] broadcast(half), dimensions={}
  h2 = @[32,48] multiply(h, h)
  h3 = @[32,48] multiply(h2, h)
  t0 = @[32,48] multiply(h3, k0)
  t1 = @[32,48] add(h, t0)
  t2 = @[32,48] multiply(t1, k1)
  t3 = @[32,48] tanh(t2)
  t4 = @[32,48] add(t3, k2)
  t5 = @[32,48] multiply(h, t4)
  g = @[32,48] multiply(t5, k3)
  ninf = @[] constant(-inf)
  zero = @[] constant(0)
  m = @[32] reduce(g, ninf), dimensions={1}, to_apply=max_@
  mb = @[32,48] broadcast(m), dimensions={0}
  sh = @[32,48] subtract(g, mb)
  e = @[32,48] exponential(sh)
  s = @[32] reduce(e, zero), dimensions={1}, to_apply=add_@
  sb = @[32,48] broadcast(s), dimensions={0}
  p = @[32,48] divide(e, sb)
  ROOT out = (@[32,48], @[32,48]) tuple(g, p)
}
"""

DOT = "  d = f32[32,48] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"


def autocast_reference(cast):
    """The f32 layer as --auto-cast matmult makes it: operands cast, f32 product."""
    return LAYER.replace("@", "f32").replace(DOT, (
        "  xc = %s[32,64] convert(x)\n  wc = %s[64,48] convert(w)\n"
        "  d = f32[32,48] dot(xc, wc), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n") % (cast, cast))


# (name, element type, compile options, tolerance of, the oracle's model or None)
CASES = [
    ("f32", "f32", [], "f32", None),
    ("bf16", "bf16", [], "bf16", None),
    ("bf16 per-op rounding", "bf16", ["--disable-mixed-precision-accumulation"], "bf16", None),
    ("f16", "f16", [], "f16", None),
    ("f16 per-op rounding", "f16", ["--disable-mixed-precision-accumulation"], "f16", None),
    ("f32 auto-cast matmult bf16", "f32", ["--auto-cast", "matmult", "--auto-cast-type", "bf16"], "f32",
     autocast_reference("bf16")),
    ("f32 auto-cast matmult fp16", "f32", ["--auto-cast", "matmult", "--auto-cast-type", "fp16"], "f32",
     autocast_reference("f16")),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1, help="random inputs per case")
    a = ap.parse_args()
    if not os.path.exists(differential.ORACLE):
        print("NOTICE: ../shared/oracle is missing; precision test not run")
        print("0 passed, 0 failed")
        return 0
    passed = failed = 0
    for name, t, options, tol, reference in CASES:
        assert reference is None or reference != LAYER.replace("@", t), name
        rtol, atol = TOLERANCE[tol]
        for seed in range(a.seeds):
            with tempfile.TemporaryDirectory() as work:
                res, why = differential.run_one(name, LAYER.replace("@", t), work, rtol, atol,
                                                compile_args=options, seed=seed + 1,
                                                ref_text=reference)
            if res == "pass":
                passed += 1
                print("precision %s seed %d: ok" % (name, seed + 1))
            else:
                failed += 1
                print("FAILED precision %s seed %d: %s %s" % (name, seed + 1, res, why))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
