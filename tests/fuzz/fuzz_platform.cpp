// The platform block every stored record carries (table lines `platform <field>
// <value>`, CSV cells, JSON keys, database columns all go through
// platform_fields()): input lines "name value" set fields, the last line is the
// stored hash. A platform whose hash was accepted must keep it through its own
// fields' text: get -> set -> hash is the identity.
#include <string>
#include <string_view>

#include "fuzz_input.hpp"
#include "sfc/error.hpp"
#include "sfc/platform_fields.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sfc::Platform platform;
  std::string hash;
  try {
    while (!text.empty()) {
      const std::size_t end = std::min(text.find('\n'), text.size());
      const std::string_view line = text.substr(0, end);
      text.remove_prefix(std::min(end + 1, text.size()));
      const std::size_t space = line.find(' ');
      const std::string_view name = line.substr(0, space);
      const std::string_view value = space == std::string_view::npos ? "" : line.substr(space + 1);
      if (name == "hash") hash = value;
      for (const sfc::PlatformField& field : sfc::platform_fields())
        if (field.name == name) field.set(platform, value);
    }
    sfc::verify_platform_hash(platform, hash);
  } catch (const sfc::Error&) {
    return 0;
  }
  sfc::Platform again;
  try {
    for (const sfc::PlatformField& field : sfc::platform_fields()) field.set(again, field.get(platform));
  } catch (const sfc::Error& e) {
    sfc::fuzz::broken(std::string("an accepted platform's own text is refused: ") + e.what());
  }
  if (again.hash() != platform.hash()) sfc::fuzz::broken("a platform's hash changed through its text");
  return 0;
}
