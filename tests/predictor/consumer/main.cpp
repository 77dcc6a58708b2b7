// Asks the installed libsfcconf, through the C++ wrapper, for one shape.
#include <cstdio>
#include <sfcconf.hpp>

int main() {
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
