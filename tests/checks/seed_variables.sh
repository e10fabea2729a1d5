#!/usr/bin/env bash
# No variable of the reference may stop at parsing:
# 1. every field of the resolved configuration (struct RuntimeConfig in
#    lib/config/config.h) is read somewhere outside lib/config: lib/ or
#    tools/ names it as `.field` or `->field`, or calls an inline method of
#    RuntimeConfig that uses it. A field deliberately read by nothing else
#    says so on its line: `// not read directly: <why>`;
# 2. every variable of the table (lib/config/variable_table.cc) is set by a
#    test outside tests/config, which tests its effect rather than its
#    parsing (a per-submodule family counts once for all its members).
# Last line: "check: N passed, N failed".
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT" || exit 1
exec /usr/bin/env python3 - "$ROOT" <<'EOF'
import os, re, subprocess, sys

root = sys.argv[1]
header = open(os.path.join(root, "lib/config/config.h")).read()
body = re.search(r"struct RuntimeConfig \{(.*?)\n\};", header, re.S).group(1)

fields = []   # (name, exempt reason or None)
methods = {}  # name -> body text
lines = body.split("\n")
i = 0
while i < len(lines):
    line = lines[i]
    m = re.match(r"\s*[\w:<>, ]+\s+(\w+)\(\) const \{(.*)", line)
    if m:  # an inline method: collect its body up to the closing brace
        text, depth = m.group(2), 1 + m.group(2).count("{") - m.group(2).count("}")
        while depth > 0 and i + 1 < len(lines):
            i += 1
            text += lines[i]
            depth += lines[i].count("{") - lines[i].count("}")
        methods[m.group(1)] = text
        i += 1
        continue
    code, _, comment = line.partition("//")
    code = code.strip()
    i += 1
    if not code.endswith(";") or "(" in code:
        continue
    code = re.sub(r"\{[^}]*\}", "", code[:-1])           # brace initialisers
    code = re.sub(r"<[^<>]*(<[^<>]*>)?[^<>]*>", "", code)  # template arguments
    decls = code.split(",")
    first = re.match(r"^[\w:]+\s+(\w+)", decls[0].split("=")[0].strip())
    if not first:
        continue
    names = [first.group(1)] + [d.split("=")[0].strip() for d in decls[1:]]
    exempt = None
    if "not read directly:" in comment:
        exempt = comment.split("not read directly:", 1)[1].strip()
    for n in names:
        n = re.sub(r"\[.*", "", n).strip()
        if n:
            fields.append((n, exempt))

def used_outside(pattern):
    out = subprocess.run(["grep", "-rlE", pattern, "lib", "tools", "--include=*.cc",
                          "--include=*.h"], cwd=root, capture_output=True, text=True).stdout
    return [f for f in out.split() if not f.startswith("lib/config/")]

called = {m for m in methods if used_outside(r"(\.|->)" + m + r"\(")}
passed = failed = 0
if len(fields) < 50:
    print(f"FAIL only {len(fields)} fields parsed from RuntimeConfig: the parser needs updating")
    failed += 1
for name, exempt in fields:
    if exempt:
        print(f"PASS {name}: not read directly ({exempt})")
        passed += 1
        continue
    users = used_outside(r"(\.|->)" + name + r"\b")
    via = [m for m in called if re.search(r"\b" + name + r"\b", methods[m])]
    if users or via:
        passed += 1
    else:
        print(f"FAIL {name}: resolved in lib/config but read by nothing outside it; give the "
              f"variable its effect, or mark the field '// not read directly: <why>'")
        failed += 1
# 2. Each variable's effect has a test outside tests/config.
table = open(os.path.join(root, "lib/config/variable_table.cc")).read()
variables = re.findall(r'^\s+\{"(NEURON_[A-Z0-9_]+)"', table, re.M)
if len(variables) < 80:
    print(f"FAIL only {len(variables)} variables parsed from variable_table.cc")
    failed += 1
texts = []
for base, _, files in os.walk(os.path.join(root, "tests")):
    if os.path.relpath(base, root).startswith("tests/config"):
        continue
    for f in files:
        if f.endswith((".cc", ".h", ".c", ".sh")):
            texts.append(open(os.path.join(base, f), errors="replace").read())
corpus = "\n".join(texts)
families = ("NEURON_RT_LOG_LEVEL_", "NEURON_RT_LOG_LOCATION_")
for v in variables:
    fam = next((f for f in families if v.startswith(f)), None)
    # A family's test builds the names ("NEURON_RT_LOG_LEVEL_" + name).
    if v in corpus or (fam and '"' + fam + '"' in corpus):
        passed += 1
    else:
        print(f"FAIL {v}: no test outside tests/config sets it; test its effect")
        failed += 1
print(f"check: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOF
