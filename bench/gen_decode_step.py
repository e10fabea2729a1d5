#!/usr/bin/env python3
"""Writes the HLO of one LLM decode step for bench/llm_decode.sh: LAYERS
layers of x += W2 . tanh(W1 . x) for one token x of K values, W1 [F, K] and
W2 [K, F] stored as PyTorch's nn.Linear stores them ([out, in]), or, with
--layout in-out, as JAX stores them ([in, out]).

--type bf16, f16 or f32: weights and activations of that type (products
accumulate in f32). --type f8: weight-only fp8, f8e4m3fn weights converted
to bf16 before each product (what fp8 checkpoints produce).

--rows R: R tokens at once (a prompt's rows; default 1).

Usage: gen_decode_step.py --type T --layers L --k K --f F [--layout out-in|in-out] [--rows R]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--type", choices=["bf16", "f16", "f32", "f8"], required=True)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--k", type=int, default=2048)
    ap.add_argument("--f", type=int, default=8192)
    ap.add_argument("--layout", choices=["out-in", "in-out"], default="out-in")
    ap.add_argument("--rows", type=int, default=1)
    a = ap.parse_args()
    act = "bf16" if a.type == "f8" else a.type
    stored = "f8e4m3fn" if a.type == "f8" else a.type
    k, f, r = a.k, a.f, a.rows
    out_in = a.layout == "out-in"
    # W1 maps K -> F, W2 maps F -> K.
    w1 = f"{stored}[{f},{k}]" if out_in else f"{stored}[{k},{f}]"
    w2 = f"{stored}[{k},{f}]" if out_in else f"{stored}[{f},{k}]"
    w_contract = 1 if out_in else 0
    lines = [f"HloModule decode_{a.type}_{a.layout}", "", "ENTRY step {", f"  x0 = {act}[{r},{k}] parameter(0)"]
    params = 1
    x = "x0"
    for layer in range(a.layers):
        lines.append(f"  w1_{layer} = {w1} parameter({params})")
        lines.append(f"  w2_{layer} = {w2} parameter({params + 1})")
        params += 2
        a1, a2 = f"w1_{layer}", f"w2_{layer}"
        if a.type == "f8":
            lines.append(f"  c1_{layer} = {w1.replace(stored, 'bf16')} convert({a1})")
            lines.append(f"  c2_{layer} = {w2.replace(stored, 'bf16')} convert({a2})")
            a1, a2 = f"c1_{layer}", f"c2_{layer}"
        lines.append(f"  h_{layer} = {act}[{r},{f}] dot({x}, {a1}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{{w_contract}}}")
        lines.append(f"  t_{layer} = {act}[{r},{f}] tanh(h_{layer})")
        lines.append(f"  y_{layer} = {act}[{r},{k}] dot(t_{layer}, {a2}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{{w_contract}}}")
        nxt = f"x{layer + 1}"
        lines.append(f"  {nxt} = {act}[{r},{k}] add({x}, y_{layer})")
        x = nxt
    lines[-1] = "  ROOT " + lines[-1].lstrip()
    lines.append("}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
