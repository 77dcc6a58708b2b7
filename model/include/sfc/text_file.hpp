// Whole-file reads and crash-safe whole-file writes, for the file formats of
// this folder (tuning tables, CSV and JSON exports).
#pragma once
#include <string>
#include <string_view>

namespace sfc {

// The largest file read_text_file() takes: far above any real table or export.
inline constexpr long long kMaxTextFileBytes = 1LL << 30;

// The bytes of a regular file of at most kMaxTextFileBytes; a directory, a
// device or a pipe is refused without reading (or blocking on) it. Throws
// sfc::Error("cannot read <path>: <reason>").
std::string read_text_file(const std::string& path);

// Writes a temporary file in the same directory, syncs it and renames it over
// `path`, so readers see the old file or the whole new one, never a part.
// Throws sfc::Error("cannot write <path>: <reason>") and leaves `path` untouched.
// An existing device or pipe (/dev/null) is written to, not replaced; "-" is
// standard output.
void write_text_file_atomically(const std::string& path, std::string_view content);

// Throws sfc::Error("cannot write <path>: <reason>") when writing `path` would
// fail or block at once: a directory, or a pipe that no process reads. For
// outputs opened some other way than write_text_file_atomically.
void check_output_file(const std::string& path);

}  // namespace sfc
