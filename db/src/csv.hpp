// CSV as RFC 4180 writes it: comma-separated fields, a field quoted ("...",
// with "" for a quote) when it holds a comma, a quote or a line break.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace sfc {

void append_csv_row(std::string& out, const std::vector<std::string>& fields);

class CsvReader {
 public:
  explicit CsvReader(std::string_view text) : rest_(text) {}
  // Reads the next record into `fields`; false at the end of the text.
  // Throws sfc::Error("line N: ...") on an unterminated or misplaced quote.
  bool next(std::vector<std::string>& fields);
  int line() const { return record_line_; }  // where the last record began (1-based)

 private:
  std::string_view rest_;
  int next_line_ = 1, record_line_ = 0;
};

}  // namespace sfc
