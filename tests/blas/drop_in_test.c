/* libsfcblas linked directly: its four GEMM symbols compute what BLAS does
 * (Fortran sgemm_/dgemm_ with character transposes; cblas_ with CBLAS enums),
 * and a bad argument prints xerbla's line and returns instead of crashing.
 * Run with SFC_BLAS_MIN_FLOPS=0 SFC_BLAS_MIN_DIM=0 so that every call takes the SFC-CA path. */
#include <math.h>
#include <stdio.h>

void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
            const int*, const float*, const int*, const float*, float*, const int*);
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int, double,
                 double*, int);

int main(void) {
  int failures = 0;
  /* column-major A 2x3 (lda 2), B^T given as 2x3 (so op(B) = 3x2), C 2x2 */
  const float a[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {1, 0, 0, 1, 1, 1};
  float c[4] = {NAN, NAN, NAN, NAN};
  const int m = 2, n = 2, k = 3, lda = 2, ldb = 2, ldc = 2;
  const float one = 1, zero = 0;
  sgemm_("N", "t", &m, &n, &k, &one, a, &lda, bt, &ldb, &zero, c, &ldc);
  /* A = [1 2 3; 4 5 6], op(B) = [1 0; 0 1; 1 1] -> C = [4 5; 10 11], column-major */
  if (!(c[0] == 4 && c[1] == 10 && c[2] == 5 && c[3] == 11)) {
    fprintf(stderr, "sgemm_: got %g %g %g %g\n", c[0], c[1], c[2], c[3]);
    ++failures;
  }
  const double ad[4] = {1, 2, 3, 4}, bd[4] = {2, 0, 0, 2};
  double cd[4] = {1, 1, 1, 1};
  const double two = 2, half = 0.5;
  const int two_i = 2;
  dgemm_("N", "N", &two_i, &two_i, &two_i, &half, ad, &two_i, bd, &two_i, &two, cd, &two_i);
  if (!(cd[0] == 3 && cd[1] == 4 && cd[2] == 5 && cd[3] == 6)) {
    fprintf(stderr, "dgemm_: got %g %g %g %g\n", cd[0], cd[1], cd[2], cd[3]);
    ++failures;
  }
  /* row-major 101, no transposes 111: C = A B */
  double e[4] = {0};
  cblas_dgemm(101, 111, 111, 2, 2, 2, 1.0, ad, 2, bd, 2, 0.0, e, 2);
  if (!(e[0] == 2 && e[1] == 4 && e[2] == 6 && e[3] == 8)) {
    fprintf(stderr, "cblas_dgemm: got %g %g %g %g\n", e[0], e[1], e[2], e[3]);
    ++failures;
  }
  /* bad arguments: xerbla's message on stderr, C untouched, no crash */
  e[0] = 42;
  cblas_dgemm(101, 111, 111, 2, 2, 2, 1.0, ad, 1, bd, 2, 0.0, e, 2); /* lda 1 < 2: parameter 9 */
  const char bad = 'X';
  sgemm_(&bad, "N", &m, &n, &k, &one, a, &lda, bt, &ldb, &zero, c, &ldc); /* parameter 1 */
  if (e[0] != 42) {
    fprintf(stderr, "a refused call wrote C\n");
    ++failures;
  }
  printf("%s\n", failures ? "drop-in BLAS: FAILED" : "drop-in BLAS: all checks passed");
  return failures != 0;
}
