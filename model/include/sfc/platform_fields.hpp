// The fields of a Platform fingerprint as (name, text) pairs, in the order the
// struct declares them. Every file format that stores a Platform (tuning table,
// SQLite columns, CSV, JSON) walks this one list, so a field added to Platform
// is added here once.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "sfc/platform.hpp"

namespace sfc {

struct PlatformField {
  std::string_view name;  // also the column / key name in every format
  bool numeric;           // stored as an integer where the format has types
  bool identity;          // part of Platform::hash(); the others are recorded only
  // Absent from records made before hwloc (table version < 3, export version
  // < 3): a reader takes 0 for it and verify_platform_hash() re-keys the record.
  bool added_with_hwloc;
  std::string (*get)(const Platform&);
  // Throws sfc::Error("<name>: ...") when a numeric field is not a non-negative integer.
  void (*set)(Platform&, std::string_view text);
};

std::span<const PlatformField> platform_fields();

// Checks the hash a file or database stored for `platform` against its fields.
// A record written before the hash covered only the hardware (it hashed every
// field, and its L3 size came from sysconf, which is not per instance and not
// stable between two machines of one kind) is accepted by that old hash and
// re-keyed: its L3 size and NUMA nodes become 0, unknown (see Platform).
// Throws sfc::Error("the platform hash H does not match its fields ...").
void verify_platform_hash(Platform& platform, const std::string& stored_hash);

// The hash a record made before hwloc carried (every field but numa_nodes).
std::string legacy_platform_hash(const Platform& platform);

}  // namespace sfc
