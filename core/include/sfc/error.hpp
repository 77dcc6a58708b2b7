// sfc::Error: the one exception type the library throws for bad input or an
// unsupported request. Its message is a complete sentence meant for a user;
// the CLI prints it on one line and exits with code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace sfc {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace sfc
