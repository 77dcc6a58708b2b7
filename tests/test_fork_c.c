/* libsfcgemm across fork() and around the caller's floating-point flags:
 * - a child forked after the parent ran GEMMs on a team of threads runs its
 *   own GEMMs to the right result (libgomp's team would wait forever there
 *   for the parent's workers), with and without online tuning;
 * - a GEMM whose product raises nothing leaves no exception flag, on a table
 *   whose unmeasured configurations are NaN.
 * Run with OMP_NUM_THREADS=2 and SFC_TUNING naming such a table. */
#define _DEFAULT_SOURCE /* usleep */
#include <fenv.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "c_check.h"
#include "sfc_gemm.h"

enum { N = 192 };
static float a[N * N], b[N * N], c[N * N];

/* C = A B with A = 1 and B(i, j) = j: every C(i, j) is N * j, exactly. */
static int gemm_is_right(void) {
  for (int i = 0; i < N * N; ++i) {
    a[i] = 1;
    b[i] = (float)(i % N);
    c[i] = -1;
  }
  if (sfc_sgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, N, N, N, 1, a, N, b, N, 0, c, N) != SFC_GEMM_OK) {
    fprintf(stderr, "sfc_sgemm: %s\n", sfc_gemm_last_error());
    return 0;
  }
  for (int i = 0; i < N * N; ++i)
    if (c[i] != (float)N * (float)(i % N)) return 0;
  return 1;
}

/* Forks a child that runs a GEMM and reports whether it was right; a child
 * still running after 60 s is taken for hung, killed and reported. */
static void check_child(void) {
  const pid_t pid = fork();
  if (pid == 0) _exit(gemm_is_right() ? 0 : 3);
  CHECK(pid > 0);
  if (pid <= 0) return;
  int status = 0;
  const time_t deadline = time(NULL) + 60;
  pid_t done;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && time(NULL) < deadline) usleep(10000);
  if (done == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    fprintf(stderr, "the forked child hung in its GEMM\n");
  }
  CHECK(done == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  const int watched = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW;
  feclearexcept(FE_ALL_EXCEPT);
  CHECK(gemm_is_right()); /* the first call opens the tuning table and plans */
  CHECK(fetestexcept(watched) == 0);
  CHECK(gemm_is_right());
  CHECK(fetestexcept(watched) == 0);
  for (int i = 0; i < 3; ++i) check_child();
  /* A grandchild: the child of a child that ran GEMMs itself. */
  const pid_t pid = fork();
  if (pid == 0) {
    int ok = gemm_is_right();
    check_child();
    _exit(ok && failures == 0 ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}
