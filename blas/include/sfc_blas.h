/* sfc_blas.h: what libsfcblas, the drop-in for a BLAS's GEMMs, did in this
 * process. Look the symbol up at run time (dlsym(RTLD_DEFAULT,
 * "sfc_blas_routing")): it is there only when the drop-in is loaded. */
#ifndef SFC_BLAS_H
#define SFC_BLAS_H

#ifdef __cplusplus
extern "C" {
#endif

/* A JSON object: {"active":true, "fallback": the real BLAS's name, "route":
 * "race" or "sfc", "sfc_calls", "sfc_gflop", "fallback_calls",
 * "fallback_gflop", "min_flops", "min_dim", "reasons": calls by why they went
 * where they did}. Valid until the calling thread's next call. */
__attribute__((visibility("default"))) const char* sfc_blas_routing(void);

#ifdef __cplusplus
}
#endif

#endif /* SFC_BLAS_H */
