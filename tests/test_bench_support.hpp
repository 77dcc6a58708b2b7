// Helpers for the bench tests: a hand-made BenchResult, an in-process peer,
// a well-formedness check for XML, and a scoped environment variable.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "sfc/bench.hpp"

namespace sfc::test {

inline Timing timing_of(double seconds) {
  Timing t;
  t.mean = t.min = seconds;
  t.reps = 1;
  return t;
}

// Two shapes, SFC-CA and peers "a" and "b" (times in seconds, per shape):
//   sfc-ca 1e-5, 4e-5;  a 2e-5, 4e-5;  b 0.5e-5, 8e-5.
inline BenchResult two_shape_result() {
  BenchResult r;
  r.implementations = {kSfcImplementation, "a", "b"};
  ShapeMeasurement small{{64, 64, 64}, {1, 1}, 100, {timing_of(1e-5), timing_of(2e-5), timing_of(0.5e-5)}};
  ShapeMeasurement large{{128, 128, 128}, {2, 4}, 200, {timing_of(4e-5), timing_of(4e-5), timing_of(8e-5)}};
  r.shapes = {small, large};
  return r;
}

// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnvironment() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Checks that `xml` is well-formed in the subset the SVG writer emits: one
// root element, every start tag closed in order or self-closed, attribute
// values quoted, '&' only in the five predefined entities, no '<' in text.
// Returns an empty string, or what is wrong.
inline std::string xml_problem(const std::string& xml) {
  std::vector<std::string> open;
  int roots = 0;
  std::size_t i = 0;
  auto entity_ok = [&](std::size_t at) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
      if (xml.compare(at, std::char_traits<char>::length(e), e) == 0) return true;
    return false;
  };
  while (i < xml.size()) {
    if (xml[i] == '&' && !entity_ok(i)) return "bare & at " + std::to_string(i);
    if (xml[i] == '>') return "stray > at " + std::to_string(i);
    if (xml[i] != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(xml[i])))
        return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    if (xml.compare(i, 2, "<?") == 0) {  // the XML declaration
      const auto end = xml.find("?>", i);
      if (end == std::string::npos) return "unterminated <?";
      i = end + 2;
      continue;
    }
    const bool closing = xml[i + 1] == '/';
    std::size_t j = i + (closing ? 2 : 1);
    std::string name;
    while (j < xml.size() &&
           (std::isalnum(static_cast<unsigned char>(xml[j])) || xml[j] == '-' || xml[j] == ':'))
      name += xml[j++];
    if (name.empty()) return "tag without a name at " + std::to_string(i);
    bool self_closing = false;
    while (j < xml.size() && xml[j] != '>') {  // attributes
      if (xml[j] == '"') {
        const auto end = xml.find('"', j + 1);
        if (end == std::string::npos) return "unterminated attribute in <" + name + ">";
        for (std::size_t k = j + 1; k < end; ++k) {
          if (xml[k] == '<') return "< inside an attribute of <" + name + ">";
          if (xml[k] == '&' && !entity_ok(k)) return "bare & inside an attribute of <" + name + ">";
        }
        j = end + 1;
      } else if (xml[j] == '<') {
        return "< inside tag <" + name + ">";
      } else {
        if (xml[j] == '=' && xml[j + 1] != '"') return "unquoted attribute in <" + name + ">";
        self_closing = xml[j] == '/';
        ++j;
      }
    }
    if (j >= xml.size()) return "unterminated tag <" + name + ">";
    i = j + 1;
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
    } else if (!self_closing) {
      if (open.empty() && ++roots > 1) return "a second root element <" + name + ">";
      open.push_back(name);
    } else if (open.empty()) {
      return "self-closed root <" + name + ">";
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return roots == 1 ? "" : "no root element";
}

}  // namespace sfc::test
