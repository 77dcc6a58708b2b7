"""Tests of the sfctune package against the build tree's libraries.

Environment (set by ctest, tests/python.cmake): PYTHONPATH at the package,
SFCTUNE_TEST_TABLE (a shipped tuning table), SFCTUNE_TEST_CLI (the sfc-tune
binary), SFCTUNE_TEST_BLAS (libsfcblas). Tests needing one that is unset skip.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import sfctune

TABLE = os.environ.get("SFCTUNE_TEST_TABLE")
CLI = os.environ.get("SFCTUNE_TEST_CLI")
BLAS = os.environ.get("SFCTUNE_TEST_BLAS")


def needs(value, name):
    return unittest.skipUnless(value, "%s is not set (ctest sets it)" % name)


@needs(TABLE, "SFCTUNE_TEST_TABLE")
class TableTest(unittest.TestCase):
    # The quick table holds f32 shapes on 2 threads, blocked layout, from 256 to 1024 each way.
    def setUp(self):
        self.table = sfctune.open(TABLE, platform="any")
        self.addCleanup(self.table.close)

    def test_a_tuned_shape_is_exact_and_names_itself(self):
        a = self.table.query(256, 256, 1024, dtype="f32", threads=2, layout="blocked")
        self.assertEqual(a.tier, "exact")
        self.assertEqual(a.distance, 0.0)
        self.assertEqual(a.nearest, (256, 256, 1024))
        self.assertIn(a.platform, ("exact", "compatible", "foreign"))
        self.assertTrue(1 <= a.k_layers <= 8 and 1 <= a.k_block_factor <= 8)

    def test_a_layout_without_tuned_shapes_says_whose_it_borrowed(self):
        own = self.table.query(256, 256, 1024, threads=2, layout="blocked")
        self.assertIsNone(own.borrowed_from)
        held = {self.table.query(256, 256, 1024, threads=2, layout=l).borrowed_from for l in ("row", "col")}
        # The quick table holds blocked shapes only: both plain layouts borrow them.
        self.assertEqual(held, {"blocked"})

    def test_every_field_is_there_for_every_tier(self):
        answers = [
            self.table.query(256, 256, 1024, threads=2, layout="blocked"),
            self.table.query(300, 300, 700, threads=2, layout="blocked"),
            self.table.query(300, 300, 700, dtype="f64", threads=2),
            self.table.query(64, 64, 64, dtype="bf16", threads=3, layout="col"),
        ]
        self.assertEqual(answers[1].tier, "nearest")
        self.assertGreater(answers[1].distance, 0)
        self.assertEqual(len(answers[1].nearest), 3)
        for a in answers:
            self.assertIn(a.tier, ("exact", "nearest", "model", "default"))
            self.assertIsInstance(a.k_layers, int)
            self.assertIsInstance(a.k_block_factor, int)
            self.assertIsInstance(a.distance, float)
            self.assertIn(a.platform, ("exact", "compatible", "foreign"))
            if math.isinf(a.distance):
                self.assertIsNone(a.nearest)
            else:
                self.assertEqual(len(a.nearest), 3)
        # No f64 or bf16 shapes in the file: nothing nearby.
        self.assertTrue(math.isinf(answers[2].distance))
        self.assertIn(answers[2].tier, ("model", "default"))

    def test_answers_are_immutable_values(self):
        a = self.table.query(256, 256, 1024, threads=2, layout="blocked")
        with self.assertRaises(AttributeError):
            a.tier = "nearest"
        self.assertEqual(a, self.table.query(256, 256, 1024, threads=2, layout="blocked"))

    def test_threads_default_to_openmp(self):
        saved = os.environ.get("OMP_NUM_THREADS")
        self.addCleanup(lambda: os.environ.__setitem__("OMP_NUM_THREADS", saved) if saved is not None
                        else os.environ.pop("OMP_NUM_THREADS", None))
        os.environ["OMP_NUM_THREADS"] = "2"
        self.assertEqual(sfctune.default_threads(), 2)
        self.assertEqual(self.table.query(256, 256, 1024, layout="blocked"),
                         self.table.query(256, 256, 1024, threads=2, layout="blocked"))
        os.environ["OMP_NUM_THREADS"] = "3,1"
        self.assertEqual(sfctune.default_threads(), 3)
        for unusable in ("", "zero", "0", "-2"):
            os.environ["OMP_NUM_THREADS"] = unusable
            self.assertEqual(sfctune.default_threads(), len(os.sched_getaffinity(0)))

    def test_bad_arguments_raise_with_the_library_message(self):
        with self.assertRaisesRegex(ValueError, "dtype"):
            self.table.query(64, 64, 64, dtype="f16")
        with self.assertRaisesRegex(ValueError, "layout"):
            self.table.query(64, 64, 64, layout="diagonal")
        with self.assertRaises(ValueError) as raised:
            self.table.query(0, 64, 64)
        self.assertTrue(str(raised.exception))  # the C library's message
        with self.assertRaises(ValueError):
            self.table.query(64, 64, 64, threads=0)
        with self.assertRaises(TypeError):
            self.table.query(64.5, 64, 64)
        with self.assertRaises(ValueError):
            self.table.query(1 << 70, 64, 64)

    def test_a_closed_table_refuses_queries(self):
        with sfctune.open(TABLE, platform="any") as table:
            table.query(256, 256, 256, threads=2)
        self.assertTrue(table.closed)
        with self.assertRaisesRegex(ValueError, "closed"):
            table.query(256, 256, 256, threads=2)
        table.close()  # again: nothing happens


class OpenTest(unittest.TestCase):
    def test_no_file_answers_from_the_model_or_default(self):
        with sfctune.open(None) as table:
            a = table.query(512, 512, 512, threads=1)
        self.assertIn(a.tier, ("model", "default"))
        self.assertIsNone(a.nearest)
        self.assertEqual(a.distance, math.inf)

    def test_a_missing_file_is_an_os_error_naming_it(self):
        with self.assertRaisesRegex(OSError, "no-such.sfctable"):
            sfctune.open("/nonexistent/no-such.sfctable")

    def test_a_file_that_is_not_a_table_is_a_runtime_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".sfctable") as f:
            f.write("not a table\n")
            f.flush()
            with self.assertRaises(RuntimeError) as raised:
                sfctune.open(f.name)
        self.assertTrue(str(raised.exception))

    @needs(TABLE, "SFCTUNE_TEST_TABLE")
    def test_a_folder_of_tables_answers_from_the_one_it_chooses(self):
        with tempfile.TemporaryDirectory() as directory:
            shutil.copy(TABLE, os.path.join(directory, "fleet.table"))
            with open(os.path.join(directory, "notes.txt"), "w") as notes:
                notes.write("not a table\n")
            with sfctune.open(directory, platform="any") as table:
                a = table.query(256, 256, 1024, dtype="f32", threads=2, layout="blocked")
            self.assertEqual(a.tier, "exact")

    def test_a_folder_without_tables_is_an_os_error_naming_it(self):
        with tempfile.TemporaryDirectory() as directory:
            with self.assertRaisesRegex(OSError, "holds no tuning tables"):
                sfctune.open(directory)

    @needs(TABLE, "SFCTUNE_TEST_TABLE")
    def test_a_bad_platform_name_is_a_value_error(self):
        with self.assertRaises(ValueError):
            sfctune.open(TABLE, platform="not-a-platform")


def gemm_bound(a, b):
    """Twice the gamma_K bound of a product's error, elementwise (as in tests/blas/numpy_test.sh)."""
    u = np.finfo(a.dtype).eps / 2
    k = a.shape[1]
    gamma = k * u / (1 - k * u)
    return 2 * gamma * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))) + np.finfo(np.float64).tiny


class GemmTest(unittest.TestCase):
    rng = np.random.default_rng(61)

    def random(self, shape, dtype):
        return self.rng.uniform(-1, 1, shape).astype(dtype)

    def check(self, got, a, b, alpha=1.0, beta=0.0, c0=None):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want = alpha * (a64 @ b64) + (beta * c0.astype(np.float64) if c0 is not None and beta else 0)
        bound = abs(alpha) * gemm_bound(a, b) + (abs(beta) * np.abs(c0) * np.finfo(a.dtype).eps * 2
                                                 if c0 is not None else 0)
        worst = float(np.max(np.abs(got.astype(np.float64) - want) / bound))
        self.assertLessEqual(worst, 1.0, "error %.3g x the bound" % worst)

    def views(self, dtype, m, n, k):
        """(name, a, b): C- and Fortran-ordered operands, transposed views and a strided copy case."""
        a, b = self.random((m, k), dtype), self.random((k, n), dtype)
        return [
            ("C", a, b),
            ("F", np.asfortranarray(a), np.asfortranarray(b)),
            ("transposed views", np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T),
            ("C x transposed", a, np.ascontiguousarray(b.T).T),
            ("row slices", self.random((m, k + 5), dtype)[:, 2:k + 2], self.random((k, n + 3), dtype)[:, :n]),
            ("strided both ways", self.random((2 * m, 2 * k), dtype)[::2, ::2], b),
        ]

    def test_products_match_numpy_for_every_order(self):
        for dtype in (np.float32, np.float64):
            for m, n, k in ((64, 48, 80), (33, 257, 65), (1, 7, 1), (5, 1, 9)):
                for name, a, b in self.views(dtype, m, n, k):
                    with self.subTest(dtype=np.dtype(dtype).name, shape=(m, n, k), operands=name):
                        c = sfctune.gemm(a, b)
                        self.assertEqual(c.shape, (m, n))
                        self.assertEqual(c.dtype, dtype)
                        self.assertTrue(c.flags.c_contiguous)
                        self.check(c, a, b)

    def test_operands_are_copied_only_when_no_order_fits(self):
        from sfctune import _gemm

        copied = []

        def counting_copy(x):
            copied.append(x.shape)
            return np.ascontiguousarray(x)

        saved, _gemm._copy = _gemm._copy, counting_copy
        self.addCleanup(setattr, _gemm, "_copy", saved)
        for name, a, b in self.views(np.float64, 24, 16, 20):
            del copied[:]
            for out in (None, np.zeros((24, 16), order="F")):
                self.check(sfctune.gemm(a, b, out=out), a, b)
            self.assertEqual(len(copied), 2 if name == "strided both ways" else 0, name)

    def test_out_alpha_and_beta(self):
        for dtype in (np.float32, np.float64):
            a, b = self.random((40, 30), dtype), self.random((30, 20), dtype)
            for order in ("C", "F"):
                for alpha, beta in ((1.0, 0.0), (-0.5, 2.0), (2.0, 1.0)):
                    with self.subTest(dtype=np.dtype(dtype).name, out=order, alpha=alpha, beta=beta):
                        c0 = np.asarray(self.random((40, 20), dtype), order=order)
                        out = c0.copy(order=order)
                        got = sfctune.gemm(a, b.T.copy().T, out=out, alpha=alpha, beta=beta)
                        self.assertIs(got, out)
                        self.check(out, a, b, alpha, beta, c0)
            # a column block of a wider array: out with a leading dimension above its width
            wide = np.zeros((40, 50), dtype)
            sfctune.gemm(a, b, out=wide[:, 10:30])
            self.check(wide[:, 10:30], a, b)
            self.assertFalse(wide[:, :10].any() or wide[:, 30:].any())

    def test_beta_zero_never_reads_out(self):
        a, b = self.random((8, 8), np.float64), self.random((8, 8), np.float64)
        out = np.full((8, 8), np.nan)
        self.check(sfctune.gemm(a, b, out=out), a, b)

    def test_out_that_is_an_input(self):
        a = self.random((16, 16), np.float64)
        b = self.random((16, 16), np.float64)
        want = a @ b
        sfctune.gemm(a, b, out=a)
        self.assertTrue(np.allclose(a, want, rtol=1e-12, atol=1e-12))

    def test_empty_and_zero_k(self):
        self.assertEqual(sfctune.gemm(np.zeros((0, 4)), np.zeros((4, 3))).shape, (0, 3))
        out = np.ones((2, 3), np.float32)
        sfctune.gemm(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), out=out, beta=2.0)
        self.assertTrue((out == 2).all())

    def test_bad_operands_raise(self):
        f32, f64 = np.ones((4, 4), np.float32), np.ones((4, 4), np.float64)
        with self.assertRaisesRegex(TypeError, "one dtype"):
            sfctune.gemm(f32, f64)
        with self.assertRaisesRegex(TypeError, "float32 or float64"):
            sfctune.gemm(np.ones((4, 4), np.int32), np.ones((4, 4), np.int32))
        with self.assertRaises(TypeError):
            sfctune.gemm([[1.0]], [[1.0]])
        with self.assertRaisesRegex(ValueError, "do not match"):
            sfctune.gemm(f64, np.ones((5, 4)))
        with self.assertRaisesRegex(ValueError, "2-D"):
            sfctune.gemm(np.ones(4), f64)

    def test_bad_out_raises(self):
        a = np.ones((4, 5))
        b = np.ones((5, 3))
        with self.assertRaisesRegex(ValueError, "shape"):
            sfctune.gemm(a, b, out=np.zeros((3, 4)))
        with self.assertRaisesRegex(ValueError, "dtype"):
            sfctune.gemm(a, b, out=np.zeros((4, 3), np.float32))
        read_only = np.zeros((4, 3))
        read_only.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            sfctune.gemm(a, b, out=read_only)
        with self.assertRaisesRegex(ValueError, "C- or Fortran-ordered"):
            sfctune.gemm(a, b, out=np.zeros((8, 6))[::2, ::2])
        with self.assertRaises(ValueError):
            sfctune.gemm(a, b, out=[[0.0] * 3] * 4)

    def test_a_call_the_library_refuses_carries_its_message(self):
        # A tuning file that cannot be used: the library's tuning error, in a
        # child process, since the process context opens SFC_TUNING once.
        code = textwrap.dedent("""
            import numpy as np, sfctune
            try:
                sfctune.gemm(np.ones((64, 64)), np.ones((64, 64)))
            except RuntimeError as e:
                print("RuntimeError:", e)
        """)
        env = dict(os.environ, SFC_TUNING="/nonexistent/tuning.sfctable")
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("RuntimeError: sfc_dgemm", result.stdout)
        self.assertIn("tuning.sfctable", result.stdout)

    def test_an_engine_in_the_global_scope_is_the_one_called(self):
        # As with a preloaded libsfcblas that exports the sfc_gemm API: one engine per process.
        code = textwrap.dedent("""
            import ctypes, os, numpy as np, sfctune
            from sfctune import _library
            path = os.path.join(_library.library_dir(), "libsfcgemm.so.0")
            ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
            a = np.arange(6.0).reshape(2, 3)
            assert np.array_equal(sfctune.gemm(a, a.T), a @ a.T)
            print("global" if _library.gemm()._name is None else _library.gemm()._name)
        """)
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "global")


@needs(CLI, "SFCTUNE_TEST_CLI")
class RecordTest(unittest.TestCase):
    def show(self, path):
        result = subprocess.run([CLI, "record", "show", path, "--json"], capture_output=True, text=True,
                                timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_record_writes_what_sfc_tune_reads(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "shapes.record")
            with sfctune.record(path) as recording:
                self.assertEqual(recording, path)
                a, b = np.ones((48, 40), np.float32), np.ones((40, 24), np.float32)
                for _ in range(3):
                    sfctune.gemm(a, b)
                with sfctune.open(None) as table:
                    table.query(300, 200, 100, dtype="f64", threads=1, layout="col")
            with open(path) as f:
                self.assertEqual(f.readline(), "sfc-shape-record 1\n")
            shown = self.show(path)
            keys = {(s["m"], s["n"], s["k"], s["dtype"], s["layout"]): s for s in shown["ranking"]}
            self.assertEqual(keys[(48, 24, 40, "f32", "row")]["calls"], 3)
            self.assertEqual(keys[(300, 200, 100, "f64", "col")]["calls"], 1)

    def test_a_file_that_is_not_a_record_is_refused_and_kept(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "notes.txt")
            with open(path, "w") as f:
                f.write("my notes\n")
            with self.assertRaisesRegex(RuntimeError, "not a shape record"):
                with sfctune.record(path):
                    self.fail("the block ran")
            with open(path) as f:
                self.assertEqual(f.read(), "my notes\n")
            # and nothing is left recording: a later record() starts cleanly
            good = os.path.join(directory, "good.record")
            with sfctune.record(good):
                sfctune.gemm(np.ones((2, 2)), np.ones((2, 2)))
            self.assertEqual(self.show(good)["calls"], 1)

    def test_an_empty_path_is_a_value_error(self):
        with self.assertRaises(ValueError):
            with sfctune.record(""):
                pass


class StatusTest(unittest.TestCase):
    def test_without_the_drop_in_it_is_inactive(self):
        sfctune.gemm(np.ones((2, 2)), np.ones((2, 2)))  # libsfcgemm loaded
        s = sfctune.status()
        self.assertIs(s["active"], False)
        self.assertEqual(s["version"], sfctune.__version__)
        self.assertTrue(any("libsfcgemm" in p for p in s["libraries"]), s["libraries"])

    @needs(BLAS, "SFCTUNE_TEST_BLAS")
    def test_under_the_preload_it_reports_routing(self):
        code = textwrap.dedent("""
            import ctypes, json, numpy as np, sfctune
            exported = hasattr(ctypes.CDLL(None), "sfc_blas_routing")
            a = np.ones((256, 256), np.float32)
            a @ a
            print(json.dumps({"exported": exported, "status": sfctune.status()}))
        """)
        env = dict(os.environ, LD_PRELOAD=BLAS, SFC_BLAS_MIN_FLOPS="0", SFC_BLAS_MIN_DIM="0")
        result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout.strip().splitlines()[-1])
        self.assertTrue(any("libsfcblas" in p for p in report["status"]["libraries"]), report)
        if not report["exported"]:
            self.skipTest("this libsfcblas does not export sfc_blas_routing yet")
        s = report["status"]
        self.assertIs(s["active"], True)
        self.assertGreaterEqual(s["sfc_calls"], 1)


if __name__ == "__main__":
    unittest.main()
