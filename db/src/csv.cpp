#include "csv.hpp"

#include "sfc/error.hpp"

namespace sfc {

void append_csv_row(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    const std::string& field = fields[i];
    if (field.find_first_of(",\"\r\n") == std::string::npos) {
      out += field;
      continue;
    }
    out += '"';
    for (char c : field) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    out += '"';
  }
  out += '\n';
}

bool CsvReader::next(std::vector<std::string>& fields) {
  fields.clear();
  if (rest_.empty()) return false;
  record_line_ = next_line_;
  std::string field;
  bool quoted = false, was_quoted = false;
  std::size_t i = 0;
  for (; i < rest_.size(); ++i) {
    const char c = rest_[i];
    if (quoted) {
      if (c == '\n') ++next_line_;
      if (c != '"') {
        field += c;
      } else if (i + 1 < rest_.size() && rest_[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      if (!field.empty() || was_quoted)
        throw Error("line " + std::to_string(next_line_) + ": a quote inside an unquoted CSV field");
      quoted = was_quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < rest_.size() && rest_[i + 1] == '\n') ++i;
      ++i;
      ++next_line_;
      break;
    } else {
      if (was_quoted) throw Error("line " + std::to_string(next_line_) + ": text after a closing quote");
      field += c;
    }
  }
  if (quoted)
    throw Error("line " + std::to_string(record_line_) + ": a quoted CSV field never ends (truncated?)");
  fields.push_back(std::move(field));
  rest_.remove_prefix(i);
  return true;
}

}  // namespace sfc
