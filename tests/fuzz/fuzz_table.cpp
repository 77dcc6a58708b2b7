// The tuning-table reader (TuningTable::load) on arbitrary bytes. A table it
// accepts must save and load back to the same content: a reader that lets
// through what its own writer cannot store (an infinite time, an empty
// platform field) is how "accepted, then broken" starts.
#include <cmath>
#include <cstring>

#include "fuzz_input.hpp"
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"
#include "sfc/tuning_table.hpp"

namespace {

bool same_time(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= 1e-5f * std::fabs(a);  // saved to 6 digits
}

void check_same(const sfc::TuningTable& a, const sfc::TuningTable& b) {
  for (const sfc::PlatformField& field : sfc::platform_fields())
    if (field.get(a.platform) != field.get(b.platform))
      sfc::fuzz::broken("platform field changed by a round trip");
  if (a.shapes.size() != b.shapes.size()) sfc::fuzz::broken("shape count changed by a round trip");
  for (std::size_t i = 0; i < a.shapes.size(); ++i) {
    const sfc::TunedShape &x = a.shapes[i], &y = b.shapes[i];
    if (x.shape.m != y.shape.m || x.shape.n != y.shape.n || x.shape.k != y.shape.k || x.dtype != y.dtype ||
        x.threads != y.threads || x.layout != y.layout || x.k_layers != y.k_layers ||
        x.k_block_factor != y.k_block_factor)
      sfc::fuzz::broken("a shape's key or winner changed by a round trip");
    for (std::size_t c = 0; c < x.seconds.size(); ++c)
      if (!same_time(x.seconds[c], y.seconds[c])) sfc::fuzz::broken("a time changed by a round trip");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = sfc::fuzz::write_input(data, size, "input.table");
  sfc::TuningTable table;
  try {
    table = sfc::TuningTable::load(path);
  } catch (const sfc::Error&) {
    return 0;  // refused with a reason: what a reader should do
  }
  const std::string again = (sfc::fuzz::scratch_dir() / "again.table").string();
  try {
    table.save(again);
  } catch (const sfc::Error& e) {
    sfc::fuzz::broken(std::string("an accepted table cannot be saved: ") + e.what());
  }
  try {
    check_same(table, sfc::TuningTable::load(again));
  } catch (const sfc::Error& e) {
    sfc::fuzz::broken(std::string("a saved table cannot be loaded back: ") + e.what());
  }
  return 0;
}
