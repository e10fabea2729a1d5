#!/usr/bin/env python3
"""Writes an HLO text module: a deep stack of transformer-ish blocks (dot,
bias, gelu-like tanh, residual, layernorm-like reduce) of about N
instructions, for bench/compile.sh. Usage: gen_mlp_stack.py N > model.hlo"""
import sys

target = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
B, D = 8, 64
out = ["HloModule mlp_stack", "", "add {", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)",
       "  ROOT s = f32[] add(a, b)", "}", "", "ENTRY main {",
       f"  x0 = f32[{B},{D}]{{1,0}} parameter(0)", f"  w = f32[{D},{D}]{{1,0}} parameter(1)",
       f"  bias = f32[{D}]{{0}} parameter(2)", "  zero = f32[] constant(0)", "  half = f32[] constant(0.5)",
       "  one = f32[] constant(1)", f"  inv = f32[] constant({1.0 / D})"]
count, i, x = len(out), 0, "x0"
while count < target:
    s = f"{B},{D}"
    block = [
        f"  wt_{i} = f32[{D},{D}]{{1,0}} transpose(w), dimensions={{1,0}}",
        f"  d_{i} = f32[{s}]{{1,0}} dot({x}, wt_{i}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}",
        f"  bb_{i} = f32[{s}]{{1,0}} broadcast(bias), dimensions={{1}}",
        f"  h_{i} = f32[{s}]{{1,0}} add(d_{i}, bb_{i})",
        f"  hb_{i} = f32[{s}]{{1,0}} broadcast(half), dimensions={{}}",
        f"  ob_{i} = f32[{s}]{{1,0}} broadcast(one), dimensions={{}}",
        f"  t_{i} = f32[{s}]{{1,0}} tanh(h_{i})",
        f"  g1_{i} = f32[{s}]{{1,0}} add(t_{i}, ob_{i})",
        f"  g2_{i} = f32[{s}]{{1,0}} multiply(h_{i}, g1_{i})",
        f"  g_{i} = f32[{s}]{{1,0}} multiply(g2_{i}, hb_{i})",
        f"  r_{i} = f32[{s}]{{1,0}} add(g_{i}, {x})",
        f"  m_{i} = f32[{B}]{{0}} reduce(r_{i}, zero), dimensions={{1}}, to_apply=add",
        f"  ib_{i} = f32[{B}]{{0}} broadcast(inv), dimensions={{}}",
        f"  mean_{i} = f32[{B}]{{0}} multiply(m_{i}, ib_{i})",
        f"  mb_{i} = f32[{s}]{{1,0}} broadcast(mean_{i}), dimensions={{0}}",
        f"  c_{i} = f32[{s}]{{1,0}} subtract(r_{i}, mb_{i})",
        f"  z_{i} = f32[{s}]{{1,0}} multiply(c_{i}, ob_{i})",
    ]
    out += block
    count += len(block)
    x = f"z_{i}"
    i += 1
out += [f"  ROOT out = f32[{B},{D}]{{1,0}} add({x}, {x})", "}", ""]
print("\n".join(out))
