/* libsfcgemm's C API, compiled as C99 against the shared library: every
 * order x transpose combination against a naive reference, BLAS's quick
 * returns, beta = 0 over NaN, BLAS-numbered argument errors, and shape
 * recording (sfc_gemm_record_*). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sfc_gemm.h"

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Element (r, c) of a stored matrix. */
static size_t at(int row_major, int r, int c, int ld) {
  return row_major ? (size_t)r * ld + c : (size_t)c * ld + r;
}

static double fill(int i) { return ((i * 37 + 11) % 101) / 50.0 - 1.0; }

static void check_double(sfc_gemm_order order, sfc_gemm_transpose ta, sfc_gemm_transpose tb, int m, int n,
                         int k, double alpha, double beta) {
  const int row = order == SFC_ROW_MAJOR;
  const int a_row = row == (ta == SFC_NO_TRANS), b_row = row == (tb == SFC_NO_TRANS);
  const int lda = (a_row ? k : m) + 1, ldb = (b_row ? n : k) + 2, ldc = (row ? n : m) + 3;
  const size_t a_size = (size_t)(a_row ? m : k) * lda, b_size = (size_t)(b_row ? k : n) * ldb;
  const size_t c_size = (size_t)(row ? m : n) * ldc;
  double *a = malloc(a_size * sizeof *a), *b = malloc(b_size * sizeof *b), *c = malloc(c_size * sizeof *c),
         *c0 = malloc(c_size * sizeof *c0);
  for (size_t i = 0; i < a_size; ++i) a[i] = fill((int)i);
  for (size_t i = 0; i < b_size; ++i) b[i] = fill((int)i + 7);
  for (size_t i = 0; i < c_size; ++i) c[i] = beta == 0 ? NAN : fill((int)i + 3);
  memcpy(c0, c, c_size * sizeof *c);
  CHECK(sfc_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == SFC_GEMM_OK);
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int p = 0; p < k; ++p) sum += a[at(a_row, i, p, lda)] * b[at(b_row, p, j, ldb)];
      const size_t ci = at(row, i, j, ldc);
      const double want = alpha * sum + (beta == 0 ? 0 : beta * c0[ci]);
      const double d = fabs(c[ci] - want);
      worst = isnan(d) ? INFINITY : (d > worst ? d : worst);
    }
  if (!(worst < 1e-10 * k)) fprintf(stderr, "order %d trans %d %d: worst error %g\n", order, ta, tb, worst);
  CHECK(worst < 1e-10 * k);
  free(a), free(b), free(c), free(c0);
}

int main(void) {
  const sfc_gemm_order orders[] = {SFC_ROW_MAJOR, SFC_COL_MAJOR};
  const sfc_gemm_transpose trans[] = {SFC_NO_TRANS, SFC_TRANS, SFC_CONJ_TRANS};
  for (int o = 0; o < 2; ++o)
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 3; ++y) {
        check_double(orders[o], trans[x], trans[y], 23, 31, 45, 1.0, 0.0);
        check_double(orders[o], trans[x], trans[y], 23, 31, 45, -0.5, 2.0);
      }

  /* float: one call against a double reference of the same inputs */
  {
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {NAN, NAN, NAN, NAN};
    /* row-major A 2x3, B 3x2: C = A B */
    CHECK(sfc_sgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 3, 1.0f, a, 3, b, 2, 0.0f, c, 2) ==
          SFC_GEMM_OK);
    CHECK(c[0] == 4 && c[1] == 5 && c[2] == 10 && c[3] == 11);
  }

  /* quick returns: M = 0 touches nothing, K = 0 and alpha = 0 scale C, never reading A or B */
  {
    double c[4] = {1, 2, 3, 4};
    CHECK(sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 0, 2, 2, 1.0, NULL, 2, NULL, 2, 0.0, c, 2) ==
          SFC_GEMM_OK);
    CHECK(c[0] == 1);
    CHECK(sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 0, 1.0, NULL, 1, NULL, 2, 2.0, c, 2) ==
          SFC_GEMM_OK);
    CHECK(c[0] == 2 && c[3] == 8);
    CHECK(sfc_dgemm(SFC_COL_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 5, 0.0, NULL, 2, NULL, 5, 0.0, c, 2) ==
          SFC_GEMM_OK);
    CHECK(c[0] == 0 && c[3] == 0);
  }

  /* arguments BLAS rejects, by their position in the call */
  {
    double a[64], b[64], c[64];
    struct {
      int status, parameter;
    } r;
#define BAD(expected, call)                                                                                \
  r.status = (call);                                                                                       \
  r.parameter = sfc_gemm_bad_parameter();                                                                  \
  CHECK(r.status == SFC_GEMM_ERR_ARGUMENT);                                                                \
  if (r.parameter != (expected))                                                                           \
    fprintf(stderr, "expected parameter %d, got %d (%s)\n", expected, r.parameter, sfc_gemm_last_error()); \
  CHECK(r.parameter == (expected));                                                                        \
  CHECK(strstr(sfc_gemm_last_error(), "parameter") != NULL)
    BAD(1, sfc_dgemm((sfc_gemm_order)7, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2));
    BAD(2, sfc_dgemm(SFC_ROW_MAJOR, (sfc_gemm_transpose)0, SFC_NO_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2));
    BAD(3, sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, (sfc_gemm_transpose)114, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2));
    BAD(4, sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2));
    BAD(6, sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, -3, 1, a, 2, b, 2, 0, c, 2));
    BAD(9, sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2));
    BAD(9, sfc_dgemm(SFC_ROW_MAJOR, SFC_TRANS, SFC_NO_TRANS, 4, 2, 3, 1, a, 3, b, 2, 0, c, 2));
    BAD(11, sfc_dgemm(SFC_COL_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2));
    BAD(14, sfc_dgemm(SFC_COL_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 3, 2, 2, 1, a, 3, b, 2, 0, c, 2));
    BAD(8, sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 2, 1, NULL, 2, b, 2, 0, c, 2));
    BAD(13, sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, NULL, 2));
  }

  /* an explicit context: no file is the model or default tier; a missing file is a tuning error */
  {
    sfc_gemm_context* context = NULL;
    CHECK(sfc_gemm_open(NULL, NULL, &context) == SFC_GEMM_OK);
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4] = {0};
    CHECK(sfc_sgemm_with(context, SFC_COL_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 2, 1, a, 2, b, 2, 0, c,
                         2) == SFC_GEMM_OK);
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3 && c[3] == 4);
    sfc_gemm_close(context);
    CHECK(sfc_gemm_open("/nonexistent/sfc.table", NULL, &context) == SFC_GEMM_ERR_TUNING);
    CHECK(context == NULL);
  }

  /* shape recording: refused paths, then one call counted in the file after a flush */
  {
    char dir[] = "/tmp/sfc_gemm_record_XXXXXX", path[256], text[4096];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(sfc_gemm_record_open(NULL) == SFC_GEMM_ERR_ARGUMENT);
    CHECK(strstr(sfc_gemm_last_error(), "path") != NULL);
    CHECK(sfc_gemm_record_open("") == SFC_GEMM_ERR_ARGUMENT);
    snprintf(path, sizeof path, "%s/missing/shapes.record", dir);
    CHECK(sfc_gemm_record_open(path) == SFC_GEMM_ERR_TUNING);
    CHECK(strstr(sfc_gemm_last_error(), "sfc_gemm_record_open") != NULL);
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    FILE* notes = fopen(path, "w");
    CHECK(notes != NULL);
    if (notes) fputs("not a shape record\n", notes), fclose(notes);
    CHECK(sfc_gemm_record_open(path) == SFC_GEMM_ERR_TUNING);
    CHECK(strstr(sfc_gemm_last_error(), "not a shape record") != NULL);
    remove(path);

    CHECK(sfc_gemm_record_flush() == SFC_GEMM_OK); /* none active */
    snprintf(path, sizeof path, "%s/shapes.record", dir);
    CHECK(sfc_gemm_record_open(path) == SFC_GEMM_OK);
    double a[23 * 45], b[45 * 31], c[23 * 31];
    for (int i = 0; i < 23 * 45; ++i) a[i] = fill(i);
    for (int i = 0; i < 45 * 31; ++i) b[i] = fill(i + 5);
    CHECK(sfc_dgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 23, 31, 45, 1, a, 45, b, 31, 0, c, 31) ==
          SFC_GEMM_OK);
    CHECK(sfc_gemm_record_flush() == SFC_GEMM_OK);
    FILE* record = fopen(path, "r");
    size_t length = record ? fread(text, 1, sizeof text - 1, record) : 0;
    if (record) fclose(record);
    text[length] = '\0';
    CHECK(strncmp(text, "sfc-shape-record 1\n", 19) == 0);
    if (!strstr(text, "\n23 31 45 f64 ")) fprintf(stderr, "the record holds:\n%s", text);
    CHECK(strstr(text, "\n23 31 45 f64 ") != NULL);
    CHECK(sfc_gemm_record_close() == SFC_GEMM_OK);
    CHECK(sfc_gemm_record_close() == SFC_GEMM_OK); /* none active */
    remove(path);
    snprintf(path, sizeof path, "%s/shapes.record.lock", dir);
    remove(path);
    rmdir(dir);
  }

  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("sfc_gemm C API: all checks passed\n");
  return failures != 0;
}
