#include <sfc_gemm.h>
int main(void) { return sfc_gemm_bad_parameter(); }
