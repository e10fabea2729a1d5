#!/usr/bin/env python3
"""Seeded generator of small well-formed HLO text modules (differential testing).

Usage: hlo_gen.py SEED  -> prints one module on stdout.
Ops so far: elementwise unary/binary, broadcast, transpose, reshape, slice,
reverse, reduce (add/max/min), dot, concatenate, pad,
compare+select, convert through bf16/f16, iota. Shapes are small (each dim 1..5), f32.
"""
import random
import sys

UNARY = ["negate", "abs", "exponential", "tanh", "floor", "ceil", "sine", "cosine", "logistic"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


def shp(dims, t="f32"):
    return "%s[%s]" % (t, ",".join(str(d) for d in dims))


def generate(seed):
    r = random.Random(seed)
    rank = r.randint(1, 3)
    dims = [r.randint(1, 5) for _ in range(rank)]
    lines = []
    comps = []
    n = [0]

    def new(shape_dims, text):
        n[0] += 1
        name = "v%d" % n[0]
        lines.append("  %s = %s %s" % (name, shp(shape_dims), text))
        return name, list(shape_dims)

    params = []
    for i in range(2):
        params.append(new(dims, "parameter(%d)" % i))
    cur = params[0]
    for _ in range(r.randint(2, 6)):
        name, d = cur
        kind = r.choice(["unary", "binary", "binary", "transpose", "reverse", "slice", "reduce", "dot", "broadcast", "concat", "pad", "select", "convert", "iota"])
        if kind == "unary":
            cur = new(d, "%s(%s)" % (r.choice(UNARY), name))
        elif kind == "binary":
            other = params[1] if params[1][1] == d else cur
            cur = new(d, "%s(%s, %s)" % (r.choice(BINARY), name, other[0]))
        elif kind == "transpose" and len(d) > 1:
            perm = list(range(len(d)))
            r.shuffle(perm)
            cur = new([d[p] for p in perm], "transpose(%s), dimensions={%s}" % (name, ",".join(map(str, perm))))
        elif kind == "reverse":
            cur = new(d, "reverse(%s), dimensions={%d}" % (name, r.randrange(len(d))))
        elif kind == "slice":
            lims = []
            nd = []
            for x in d:
                a = r.randint(0, x - 1)
                b = r.randint(a + 1, x)
                lims.append("[%d:%d]" % (a, b))
                nd.append(b - a)
            cur = new(nd, "slice(%s), slice={%s}" % (name, ",".join(lims)))
        elif kind == "reduce" and len(d) > 1:
            op = r.choice(["add", "maximum", "minimum"])
            init = {"add": "0", "maximum": "-inf", "minimum": "inf"}[op]
            cname = "red%d" % len(comps)
            comps.append("%s {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] %s(a, b)\n}\n" % (cname, op))
            c = new([], "constant(%s)" % init)
            k = r.randrange(len(d))
            cur = new(d[:k] + d[k + 1:], "reduce(%s, %s), dimensions={%d}, to_apply=%s" % (name, c[0], k, cname))
        elif kind == "dot" and len(d) == 2:
            m = r.randint(1, 5)
            w = new([d[1], m], "parameter(%d)" % len(params))
            params.append(w)
            cur = new([d[0], m], "dot(%s, %s), lhs_contracting_dims={1}, rhs_contracting_dims={0}" % (name, w[0]))
        elif kind == "concat":
            k = r.randrange(len(d))
            nd = list(d); nd[k] *= 2
            cur = new(nd, "concatenate(%s, %s), dimensions={%d}" % (name, name, k))
        elif kind == "pad":
            cfg = "x".join("%d_%d" % (r.randint(0, 2), r.randint(0, 2)) for _ in d)
            z = new([], "constant(0.5)")
            nd = [x + int(c.split("_")[0]) + int(c.split("_")[1]) for x, c in zip(d, cfg.split("x"))]
            cur = new(nd, "pad(%s, %s), padding=%s" % (name, z[0], cfg))
        elif kind == "select" and params[1][1] == d:
            n[0] += 1
            pn = "v%d" % n[0]
            lines.append("  %s = %s compare(%s, %s), direction=%s" % (pn, shp(d, "pred"), name, params[1][0], r.choice(["LT", "GT", "GE", "EQ"])))
            cur = new(d, "select(%s, %s, %s)" % (pn, name, params[1][0]))
        elif kind == "convert":
            t = r.choice(["bf16", "f16"])
            n[0] += 1
            cn = "v%d" % n[0]
            lines.append("  %s = %s convert(%s)" % (cn, shp(d, t), name))
            cur = new(d, "convert(%s)" % cn)
        elif kind == "iota":
            io = new(d, "iota(), iota_dimension=%d" % r.randrange(len(d)))
            cur = new(d, "add(%s, %s)" % (name, io[0]))
        elif kind == "broadcast" and len(d) < 3:
            k = r.randint(1, 4)
            cur = new(d + [k], "broadcast(%s), dimensions={%s}" % (name, ",".join(map(str, range(len(d))))))
    # (extra kinds are handled in the loop above)
    # Make the ROOT line (a copy when the last line is not the result).
    if not lines[-1].startswith("  %s =" % cur[0]):
        cur = new(cur[1], "copy(%s)" % cur[0])
    last = lines.pop()
    lines.append(last.replace("  %s =" % cur[0], "  ROOT %s =" % cur[0], 1))
    sig = ", ".join(shp(p[1]) for p in params)
    return ("HloModule diff_%d, entry_computation_layout={(%s)->%s}\n\n" % (seed, sig, shp(cur[1]))
            + "\n".join(comps) + "\nENTRY main {\n" + "\n".join(lines) + "\n}\n")


if __name__ == "__main__":
    sys.stdout.write(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
