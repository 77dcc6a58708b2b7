// The shape-record reader (ShapeRecord::parse: SFC_RECORD files, read back by
// the recorder when it merges, by `record show` and `tune --from-record`) on
// arbitrary bytes. An accepted record must format and parse back to the same
// keys and counts: the recorder rewrites the file it read, so a record that
// does not survive that would lose counts at the next flush.
#include <string>
#include <string_view>

#include "fuzz_input.hpp"
#include "sfc/error.hpp"
#include "sfc/shape_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sfc::ShapeRecord record;
  try {
    record = sfc::ShapeRecord::parse(text, "input");
  } catch (const sfc::Error&) {
    return 0;  // refused with a reason
  }
  sfc::ShapeRecord again;
  try {
    again = sfc::ShapeRecord::parse(record.format(), "formatted");
  } catch (const sfc::Error& e) {
    sfc::fuzz::broken(std::string("an accepted record does not read back: ") + e.what());
  }
  if (again.shapes().size() != record.shapes().size() || again.total_calls() != record.total_calls())
    sfc::fuzz::broken("keys or counts changed by a round trip");
  for (const sfc::RecordedShape& shape : record.shapes()) {
    bool found = false;
    for (const sfc::RecordedShape& other : again.shapes())
      found = found || (other.key == shape.key && other.calls == shape.calls && other.tier == shape.tier);
    if (!found) sfc::fuzz::broken("a key's count or tier changed by a round trip");
  }
  return 0;
}
