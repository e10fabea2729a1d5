# Sourced by the checks that read or write arrays with numpy: sets PY to
# the first python3 that has it (Debian's python3-numpy where another
# python3 comes first on PATH), or ends the check with a NOTICE and a
# "0 passed, 0 failed" summary naming `$1`, what is skipped.
PY=""
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then PY="$p"; break; fi
done
if [ -z "$PY" ]; then
  echo "NOTICE: $1 skipped: no python3 with numpy (python3-numpy)"
  echo "check: 0 passed, 0 failed"
  exit 0
fi
