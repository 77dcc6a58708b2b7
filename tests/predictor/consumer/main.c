/* Asks the installed libsfcconf, from C, for one shape, and runs one GEMM
 * through the installed libsfcgemm (built with the flags pkg-config gives). */
#include <sfc_gemm.h>
#include <sfcconf.h>
#include <stdio.h>

int main(void) {
  sfcconf_handle* conf = NULL;
  sfcconf_answer a;
  if (sfcconf_open(NULL, NULL, &conf) != SFCCONF_OK ||
      sfcconf_query(conf, 512, 512, 512, SFCCONF_F32, 2, &a) != SFCCONF_OK) {
    fprintf(stderr, "%s\n", sfcconf_last_error());
    return 1;
  }
  printf("k_layers=%d k_block_factor=%d tier=%s\n", a.k_layers, a.k_block_factor, sfcconf_tier_name(a.tier));
  sfcconf_close(conf);
  const double x[4] = {1, 2, 3, 4}, identity[4] = {1, 0, 0, 1};
  double y[4] = {0};
  if (sfc_dgemm(SFC_COL_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 2, 1.0, x, 2, identity, 2, 0.0, y, 2) !=
          SFC_GEMM_OK ||
      y[3] != 4) {
    fprintf(stderr, "sfc_dgemm: %s\n", sfc_gemm_last_error());
    return 1;
  }
  return 0;
}
