#!/usr/bin/python3
"""Runs the oracle (shared/oracle/hlo_ref.py) over many modules in one Python
process, so numpy and the oracle are imported once instead of once a module
(about a third of the oracle test's time).

Usage: oracle_batch.py ORACLE TIMEOUT_S < JOBS
JOBS: one line a module, "MODULE<TAB>OUT_DIR<TAB>LOG". Each module runs as
`hlo_ref.py MODULE --random-inputs --seed 1 --out-dir OUT_DIR` would: what it
prints goes to LOG, its exit status to LOG.rc (124 when it ran past
TIMEOUT_S seconds, 1 for an exception it did not handle).
"""
import contextlib
import importlib.util
import signal
import sys
import traceback


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def main():
    oracle, timeout = sys.argv[1], int(sys.argv[2])
    spec = importlib.util.spec_from_file_location("hlo_ref", oracle)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    signal.signal(signal.SIGALRM, on_alarm)
    for line in sys.stdin:
        module, out_dir, log = line.rstrip("\n").split("\t")
        with open(log, "w") as f, contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
            signal.alarm(timeout)
            try:
                rc = ref.main([module, "--random-inputs", "--seed", "1", "--out-dir", out_dir])
            except Timeout:
                rc = 124
                print("TIMEOUT after %d s" % timeout)
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except BaseException:  # MemoryError and the like: this module only
                traceback.print_exc()
                rc = 1
            finally:
                signal.alarm(0)
        with open(log + ".rc", "w") as f:
            f.write("%d\n" % (rc or 0))


if __name__ == "__main__":
    main()
