// libsfcconf's sfcconf_open + sfcconf_query on arbitrary bytes, the way a
// deployed program meets a damaged or hostile tuning file: the bytes are a
// table or, when they start with SQLite's header, a database. Every status is
// fine but SFCCONF_ERR_INTERNAL (an exception the library did not expect);
// sizes for the queries come from the input's first bytes too.
#include <algorithm>
#include <cstring>

#include "fuzz_input.hpp"
#include "sfcconf.h"

namespace {

void check(sfcconf_status status) {
  if (status == SFCCONF_ERR_INTERNAL)
    sfc::fuzz::broken(std::string("internal error: ") + sfcconf_last_error());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = sfc::fuzz::write_input(data, size, "input.sfcconf");
  sfcconf_handle* conf = nullptr;
  const sfcconf_status opened = sfcconf_open(path.c_str(), "any", &conf);
  check(opened);
  if (opened != SFCCONF_OK) return 0;
  std::int64_t sizes[3] = {700, 1500, 3000};
  std::memcpy(sizes, data, std::min(size, sizeof sizes));  // any sign and size: the API must refuse or answer
  const sfcconf_dtype dtypes[] = {SFCCONF_F32, SFCCONF_F64, SFCCONF_BF16};
  const sfcconf_layout layouts[] = {SFCCONF_BLOCKED, SFCCONF_ROW_MAJOR, SFCCONF_COL_MAJOR};
  for (const sfcconf_dtype dtype : dtypes)
    for (const sfcconf_layout layout : layouts)
      for (const int threads : {1, 2, 64}) {
        sfcconf_answer answer;
        sfcconf_platform_match match;
        check(sfcconf_query_match(conf, 256, 512, 1024, dtype, threads, layout, &answer, &match));
        const sfcconf_status status =
            sfcconf_query_match(conf, sizes[0], sizes[1], sizes[2], dtype, threads, layout, &answer, &match);
        check(status);
        if (status == SFCCONF_OK && (answer.k_layers < 1 || answer.k_layers > 8 ||
                                     answer.k_block_factor < 1 || answer.k_block_factor > 8))
          sfc::fuzz::broken("an answer outside 1..8");
      }
  sfcconf_close(conf);
  return 0;
}
