"""numpy under the drop-in where plain BLAS has no traps: fork and FP flags.

Run under LD_PRELOAD=libsfcblas.so with SFC_TUNING naming a table whose
unmeasured configurations are NaN. Each of os.fork, a multiprocessing `fork`
Pool and a `forkserver` whose server ran GEMMs runs GEMMs in a child after the
parent ran them on a team of threads, ROUNDS times; a child that does not
finish within 60 s counts as hung. np.seterr(all='raise') throughout: a flag
left by the library around the product raises FloatingPointError.
Prints one line per mode and exits non-zero on any hang, wrong result or error.
"""
import multiprocessing as mp
import os
import sys

import numpy as np

np.seterr(all="raise")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
N = 256


def product_is_right(_=None):
    np.seterr(all="raise")
    a = np.ones((N, N), np.float32)
    b = np.tile(np.arange(N, dtype=np.float32), (N, 1))
    return bool(((a @ b) == N * np.arange(N, dtype=np.float32)).all())


def with_os_fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0 if product_is_right() else 3)
    for _ in range(6000):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        import time
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    raise TimeoutError("child hung")


def with_pool(method):
    with mp.get_context(method).Pool(2) as pool:
        result = pool.map_async(product_is_right, range(4))
        return all(result.get(timeout=60))


if __name__ == "__main__":
    assert product_is_right() and product_is_right()  # the parent ran GEMMs first
    mp.set_forkserver_preload(["fork_fp_server"])  # the server runs a GEMM as it starts
    failed = 0
    for mode, run in (("os.fork", with_os_fork), ("fork Pool", lambda: with_pool("fork")),
                      ("forkserver", lambda: with_pool("forkserver"))):
        ok = hung = wrong = 0
        for _ in range(ROUNDS):
            try:
                if run():
                    ok += 1
                else:
                    wrong += 1
            except mp.TimeoutError:
                hung += 1
            except TimeoutError:
                hung += 1
        print(f"{mode}: {ok} of {ROUNDS} runs right, {hung} hung, {wrong} wrong")
        failed += hung + wrong
    sys.exit(1 if failed else 0)
