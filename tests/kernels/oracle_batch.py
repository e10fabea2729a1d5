#!/usr/bin/python3
"""Runs the oracle (shared/oracle/hlo_ref.py) over many modules with numpy and
the oracle imported once: each module runs in a child forked from this
process (cheap, and killable when it overruns), instead of a fresh Python
that imports numpy again (about a third of the oracle test's time).

Usage: oracle_batch.py ORACLE TIMEOUT_S < JOBS
JOBS: one line a module, "MODULE<TAB>OUT_DIR<TAB>LOG". Each module runs as
`hlo_ref.py MODULE --random-inputs --seed 1 --out-dir OUT_DIR` would: what it
prints goes to LOG, its exit status to LOG.rc (124 when it ran past
TIMEOUT_S seconds and was killed, 1 for an exception it did not handle).
"""
import importlib.util
import os
import signal
import sys
import time
import traceback


def run_one(ref, module, out_dir, log, timeout):
    pid = os.fork()
    if pid == 0:  # the child: output to LOG, status as the exit code
        rc = 1
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            sys.stdout = os.fdopen(1, "w", buffering=1)
            sys.stderr = os.fdopen(2, "w", buffering=1)
            rc = ref.main([module, "--random-inputs", "--seed", "1", "--out-dir", out_dir]) or 0
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        except BaseException:  # MemoryError and the like: this module only
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(rc)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            with open(log, "a") as f:
                f.write("TIMEOUT after %d s\n" % timeout)
            return 124
        time.sleep(0.005)


def main():
    oracle, timeout = sys.argv[1], int(sys.argv[2])
    spec = importlib.util.spec_from_file_location("hlo_ref", oracle)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    for line in sys.stdin:
        module, out_dir, log = line.rstrip("\n").split("\t")
        rc = run_one(ref, module, out_dir, log, timeout)
        with open(log + ".rc", "w") as f:
            f.write("%d\n" % rc)


if __name__ == "__main__":
    main()
