/* sfc_gemm.h: SFC-CA GEMM for C programs, shaped like CBLAS's xGEMM.
 *
 *   sfc_gemm_status s = sfc_sgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_TRANS, m, n, k,
 *                                 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
 *   if (s != SFC_GEMM_OK) fprintf(stderr, "%s\n", sfc_gemm_last_error());
 *
 * C = alpha * op(A) * op(B) + beta * C with BLAS's rules: M or N = 0 returns at
 * once, K = 0 or alpha = 0 scales C by beta without reading A or B, beta = 0
 * never reads C. Each call takes its (K_layers, k_block_factor) from the
 * tuning table, database or folder of tables named by the environment
 * variable SFC_TUNING (opened on the first call; unset: the tables installed
 * in <prefix>/share/sfc-tune/tables when they hold this machine's, else the
 * model or default tier), or from a
 * context opened explicitly, and reuses a plan per shape, type, layout and
 * thread count. Threads: omp_get_max_threads(). Thread-safe.
 *
 * Libraries: libsfcgemm (-lsfcgemm), which also carries libsfcconf's engine. */
#ifndef SFC_GEMM_H
#define SFC_GEMM_H

#include <stdint.h>

/* As in sfcconf.h: a fixed underlying type in C++, so that an out-of-range
 * value from a C caller is refused, not undefined. */
#ifndef SFCCONF_ENUM
#ifdef __cplusplus
#define SFCCONF_ENUM(name) enum name : int
#else
#define SFCCONF_ENUM(name) enum name
#endif
#endif

#ifndef SFC_GEMM_API
#if defined(__GNUC__)
#define SFC_GEMM_API __attribute__((visibility("default")))
#else
#define SFC_GEMM_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The values of CBLAS_ORDER and CBLAS_TRANSPOSE, so CBLAS enums pass as they are. */
typedef SFCCONF_ENUM(sfc_gemm_order){SFC_ROW_MAJOR = 101, SFC_COL_MAJOR = 102} sfc_gemm_order;
typedef SFCCONF_ENUM(sfc_gemm_transpose){
    SFC_NO_TRANS = 111, SFC_TRANS = 112, SFC_CONJ_TRANS = 113 /* the same as SFC_TRANS for real matrices */
} sfc_gemm_transpose;

typedef SFCCONF_ENUM(sfc_gemm_status){
    SFC_GEMM_OK = 0,
    SFC_GEMM_ERR_ARGUMENT = 1, /* sfc_gemm_bad_parameter() says which, numbered as in the call (1 = order) */
    SFC_GEMM_ERR_TUNING = 2,   /* the tuning file (SFC_TUNING, or the context's) cannot be used */
    SFC_GEMM_ERR_ENGINE =
        3, /* the engine refused the call (no memory for the plan, no kernel for this CPU) */
    SFC_GEMM_ERR_INTERNAL = 4 /* a bug: please report the message */
} sfc_gemm_status;

/* Tuning opened explicitly instead of through SFC_TUNING. */
typedef struct sfc_gemm_context sfc_gemm_context;

/* `tuning_path`: a tuning table, database or folder of tables (NULL: none); `platform`: as
 * sfcconf_open (NULL: SFC_PLATFORM, else this machine). */
SFC_GEMM_API sfc_gemm_status sfc_gemm_open(const char* tuning_path, const char* platform,
                                           sfc_gemm_context** out);
SFC_GEMM_API void sfc_gemm_close(sfc_gemm_context* context);

/* With the process's context (SFC_TUNING). */
SFC_GEMM_API sfc_gemm_status sfc_sgemm(sfc_gemm_order order, sfc_gemm_transpose trans_a,
                                       sfc_gemm_transpose trans_b, int m, int n, int k, float alpha,
                                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                                       int ldc);
SFC_GEMM_API sfc_gemm_status sfc_dgemm(sfc_gemm_order order, sfc_gemm_transpose trans_a,
                                       sfc_gemm_transpose trans_b, int m, int n, int k, double alpha,
                                       const double* a, int lda, const double* b, int ldb, double beta,
                                       double* c, int ldc);
/* With an explicit context (NULL: the process's). */
SFC_GEMM_API sfc_gemm_status sfc_sgemm_with(sfc_gemm_context* context, sfc_gemm_order order,
                                            sfc_gemm_transpose trans_a, sfc_gemm_transpose trans_b, int m,
                                            int n, int k, float alpha, const float* a, int lda,
                                            const float* b, int ldb, float beta, float* c, int ldc);
SFC_GEMM_API sfc_gemm_status sfc_dgemm_with(sfc_gemm_context* context, sfc_gemm_order order,
                                            sfc_gemm_transpose trans_a, sfc_gemm_transpose trans_b, int m,
                                            int n, int k, double alpha, const double* a, int lda,
                                            const double* b, int ldb, double beta, double* c, int ldc);

/* The argument checks of sfc_sgemm without the GEMM (`alpha_zero`: alpha
 * is 0, so A and B may be NULL): SFC_GEMM_OK, or SFC_GEMM_ERR_ARGUMENT with
 * the message and parameter as a call would leave them. For wrappers that
 * decide where a call runs before running it (libsfcblas). */
SFC_GEMM_API sfc_gemm_status sfc_gemm_check_arguments(sfc_gemm_order order, sfc_gemm_transpose trans_a,
                                                      sfc_gemm_transpose trans_b, int m, int n, int k,
                                                      const void* a, int lda, const void* b, int ldb,
                                                      const void* c, int ldc, int alpha_zero);

/* The last failure of this thread: a message, and for SFC_GEMM_ERR_ARGUMENT
 * the parameter's position in sfc_sgemm's list (0 otherwise). */
SFC_GEMM_API const char* sfc_gemm_last_error(void);
SFC_GEMM_API int sfc_gemm_bad_parameter(void);

/* Shape recording, as sfcconf_record_open/_flush/_close (sfcconf.h) do for
 * libsfcconf: counts every GEMM this library runs, per shape, type, thread
 * count, layout and transposes, into a shape record file that `sfc-tune record
 * show` ranks and `sfc-tune tune --from-record` tunes (SFC_RECORD=FILE does
 * the same from the environment). The recording is this library's own: in a
 * process that also loads libsfcconf, start both to count both.
 *
 * sfc_gemm_record_open: starts recording into `path` (a recording into
 * another file is written and stopped). SFC_GEMM_ERR_ARGUMENT: `path` is NULL
 * or empty; SFC_GEMM_ERR_TUNING: `path` exists and is not a shape record, or
 * it or `path`.lock cannot be created or read. sfc_gemm_record_flush: writes
 * the counts now (SFC_GEMM_OK when none is active). sfc_gemm_record_close:
 * writes them and stops recording. Errors set sfc_gemm_last_error. */
SFC_GEMM_API sfc_gemm_status sfc_gemm_record_open(const char* path);
SFC_GEMM_API sfc_gemm_status sfc_gemm_record_flush(void);
SFC_GEMM_API sfc_gemm_status sfc_gemm_record_close(void);

#ifdef __cplusplus
}
#endif

#endif /* SFC_GEMM_H */
