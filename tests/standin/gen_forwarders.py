#!/usr/bin/env python3
"""Writes forwarders.inc and standin.map for the stand-in libnrt.so.1 from
the SDK's public headers in include/nrt: one FORWARD(name, return type,
(parameters), (arguments)) line and one export per SDK function. Left out:
nrt_tools_ext.h (our extras) and nrt_get_last_error (ours too), which a
foreign runtime does not have. Run from the repository root after a header
changes; tests/checks/foreign_runtime.sh checks the stand-in exports every
function the headers declare."""
import glob
import re
import sys

OURS = {"nrt_get_last_error"}


def declarations(root="include/nrt"):
    for path in sorted(glob.glob(f"{root}/*.h")):
        if path.endswith("nrt_tools_ext.h"):
            continue
        text = open(path).read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        text = re.sub(r"#[^\n]*", "", text)
        for m in re.finditer(r"([A-Za-z_][\w \t*]*?)\b(nrta?_\w+)\s*\(([^;{}]*?)\)\s*;", text, flags=re.S):
            ret = " ".join(m.group(1).split())
            name = m.group(2)
            if "typedef" in ret or ret.startswith("return") or name in OURS:
                continue
            params = " ".join(m.group(3).split())
            yield name, ret, params


def argument_names(params):
    if params in ("", "void"):
        return []
    names = []
    for p in params.split(","):
        if "(" in p or "[" in p or "..." in p:
            sys.exit(f"gen_forwarders: cannot forward a parameter like '{p.strip()}'")
        names.append(re.findall(r"\w+", p)[-1])
    return names


def main():
    decls = sorted(declarations())
    with open("tests/standin/forwarders.inc", "w") as inc:
        for name, ret, params in decls:
            args = ", ".join(argument_names(params))
            inc.write(f"FORWARD({name}, {ret}, ({params or 'void'}), ({args}))\n")
    with open("tests/standin/standin.map", "w") as m:
        m.write("/* The stand-in exports the SDK's functions and nothing else: no\n"
                "   nrt_get_last_error, no nrt_tools_* extras. Written by\n"
                "   gen_forwarders.py from include/nrt. */\n{\n  global:\n")
        for name, _, _ in decls:
            m.write(f"    {name};\n")
        m.write("  local: *;\n};\n")
    print(f"{len(decls)} functions")


if __name__ == "__main__":
    main()
