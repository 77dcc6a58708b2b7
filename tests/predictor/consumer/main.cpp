// Asks the installed libsfcconf, through the C++ wrapper, for one shape, and
// runs one GEMM through the installed libsfcgemm.
#include <sfc_gemm.h>
#include <cstdio>
#include <sfcconf.hpp>

int main() {
  const float a[4] = {1, 2, 3, 4}, b[4] = {0, 1, 1, 0};
  float c[4] = {};
  if (sfc_sgemm(SFC_ROW_MAJOR, SFC_NO_TRANS, SFC_NO_TRANS, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2) !=
          SFC_GEMM_OK ||
      c[0] != 2 || c[1] != 1 || c[2] != 4 || c[3] != 3) {
    std::printf("sfc_sgemm failed: %s\n", sfc_gemm_last_error());
    return 1;
  }
  try {
    const sfcconf::TunedConfigs configs(nullptr);  // no tuning file: the default tier
    const sfcconf_answer a = configs.query(1024, 1024, 1024, SFCCONF_F32, 2);
    std::printf("k_layers=%d k_block_factor=%d tier=%s\n", a.k_layers, a.k_block_factor,
                sfcconf_tier_name(a.tier));
    configs.query(0, 1, 1);  // must throw
    return 1;
  } catch (const sfcconf::Error& e) {
    std::printf("refused as expected (%s): %s\n", sfcconf_status_name(e.status()), e.what());
    return e.status() == SFCCONF_ERR_ARGUMENT ? 0 : 1;
  }
}
