// The platform fingerprint read by hwloc from synthetic machines (XML
// topologies in tests/data/topologies, made with `lstopo --input "..."`), and
// how two fingerprints match.
#include <doctest/doctest.h>

#include <string>

#include "sfc/error.hpp"
#include "sfc/platform.hpp"
#include "sfc/tuning_table.hpp"
#include "support.hpp"

using sfc::Platform;
using sfc::PlatformMatch;

namespace {

Platform machine(const std::string& name, int threads = 2) {
  return sfc::platform_from_topology(std::string(SFC_SOURCE_DIR) + "/tests/data/topologies/" + name + ".xml",
                                     threads);
}

PlatformMatch match(const Platform& tuned, const Platform& here) {
  return sfc::compare_platforms(tuned, here).match;
}

}  // namespace

TEST_CASE("platform: hwloc reads cores, caches per instance and NUMA nodes of XML topologies") {
  const Platform zen5 = machine("zen5-2core");
  CHECK(zen5.cpu_model == "AMD EPYC 9B45");
  CHECK(zen5.cores == 2);
  CHECK(zen5.threads == 2);
  CHECK(zen5.l1d_bytes == 48 << 10);
  CHECK(zen5.l2_bytes == 1 << 20);
  CHECK(zen5.l3_bytes == 32 << 20);  // one CCD's, not a sum or a sysconf guess
  CHECK(zen5.numa_nodes == 1);
  CHECK_FALSE(zen5.isa.empty());
  CHECK_FALSE(zen5.legacy());

  const Platform big = machine("zen5-16core", 16);
  CHECK(big.cores == 16);           // two hardware threads per core: cores, not PUs
  CHECK(big.l3_bytes == 32 << 20);  // per CCD, of two
  CHECK(big.threads == 16);

  const Platform xeon = machine("xeon-2core");
  CHECK(xeon.l2_bytes == 2 << 20);
  CHECK(xeon.l3_bytes == 105 << 20);

  const Platform sockets = machine("two-sockets");
  CHECK(sockets.numa_nodes == 2);
  CHECK(sockets.cores == 16);
  CHECK(sockets.l2_bytes == 1280 << 10);

  const Platform no_l3 = machine("no-l3");
  CHECK(no_l3.l3_bytes == 0);
  CHECK(no_l3.cores == 4);
}

TEST_CASE("platform: synthetic descriptions load too, and bad sources are errors") {
  const Platform p = sfc::platform_from_topology(
      "package:1 l3:1(size=16MiB) l2:4(size=512KiB) l1d:1(size=32KiB) core:1 pu:1", 1);
  CHECK(p.cores == 4);
  CHECK(p.l2_bytes == 512 << 10);
  CHECK(p.cpu_model == "unknown");
  CHECK_THROWS_AS(sfc::platform_from_topology("/no/such/topology.xml", 2), sfc::Error);
  CHECK_THROWS_AS(sfc::platform_from_topology("package:x", 2), sfc::Error);
  CHECK_THROWS_AS(sfc::platform_from_topology("", 2), sfc::Error);
}

TEST_CASE("platform: the hash covers the hardware and threads, not the compiler or LIBXSMM") {
  const Platform a = machine("zen5-2core");
  Platform b = a;
  b.compiler = "clang 18";
  b.libxsmm_version = "1.17-3871";
  CHECK(a.hash() == b.hash());
  CHECK(a.hash().size() == 16);
  CHECK(machine("zen5-2core-twin").hash() == a.hash());  // another machine of the same kind
  for (auto edit : {+[](Platform& p) { p.threads = 4; }, +[](Platform& p) { p.cores = 4; },
                    +[](Platform& p) { p.l3_bytes = 0; }, +[](Platform& p) { p.numa_nodes = 2; },
                    +[](Platform& p) { p.isa = p.isa == "hsw" ? "skx" : "hsw"; },
                    +[](Platform& p) { p.cpu_model += "!"; }, +[](Platform& p) { p.l1d_bytes = 1; },
                    +[](Platform& p) { p.l2_bytes = 1; }}) {
    Platform c = a;
    edit(c);
    CHECK(c.hash() != a.hash());
  }
}

TEST_CASE("platform: twins match exactly, other core counts are compatible, other caches or ISAs foreign") {
  const Platform zen5 = machine("zen5-2core");
  CHECK(match(zen5, machine("zen5-2core-twin")) == PlatformMatch::exact);
  CHECK(match(zen5, machine("zen5-2core-twin", 16)) ==
        PlatformMatch::exact);  // threads are the predictor's business
  CHECK(match(zen5, machine("zen5-16core")) == PlatformMatch::compatible);
  CHECK(match(machine("zen5-16core"), zen5) == PlatformMatch::compatible);

  const sfc::PlatformComparison xeon = sfc::compare_platforms(zen5, machine("xeon-2core"));
  CHECK(xeon.match == PlatformMatch::foreign);
  CHECK(xeon.describe().find("l2_bytes: tuned 1048576, here 2097152") != std::string::npos);
  CHECK(xeon.describe().find("l3_bytes") != std::string::npos);
  CHECK(xeon.describe().find("cpu_model") != std::string::npos);
  CHECK(match(zen5, machine("no-l3")) == PlatformMatch::foreign);           // L3 on one side only
  CHECK(match(zen5, machine("two-sockets")) == PlatformMatch::compatible);  // 48 vs 32 MiB L3: within 1.5x

  Platform other_isa = zen5;
  other_isa.isa = zen5.isa == "hsw" ? "skx" : "hsw";
  const sfc::PlatformComparison isa = sfc::compare_platforms(zen5, other_isa);
  CHECK(isa.match == PlatformMatch::foreign);
  CHECK(isa.differences.size() == 1);
  CHECK(isa.differences[0].starts_with("isa: tuned"));

  Platform small_l1 = zen5;
  small_l1.l1d_bytes = 32 << 10;  // 48 vs 32 KiB: within the tolerance
  CHECK(match(small_l1, zen5) == PlatformMatch::compatible);
}

TEST_CASE("platform: the same CPU model reporting another L3 is compatible, another model's is foreign") {
  // What two guests of one Zen 5 VM type read (hwloc, from the hypervisor's
  // CPUID): the socket's 508 MiB on one host, one CCD's 32 MiB on another.
  Platform socket_view = machine("zen5-2core");
  socket_view.l3_bytes = std::size_t(520192) << 10;
  const Platform ccd_view = machine("zen5-2core-twin");
  REQUIRE(ccd_view.l3_bytes == std::size_t(32) << 20);
  const sfc::PlatformComparison twins = sfc::compare_platforms(socket_view, ccd_view);
  CHECK(twins.match == PlatformMatch::compatible);
  REQUIRE(twins.differences.size() == 1);
  CHECK(twins.differences[0].starts_with("l3_bytes: tuned"));
  CHECK(socket_view.hash() != ccd_view.hash());  // not the same platform: exact only on equal reports

  Platform no_l3_shown = ccd_view;  // an L3 hidden altogether: the same chip still
  no_l3_shown.l3_bytes = 0;
  CHECK(match(no_l3_shown, ccd_view) == PlatformMatch::compatible);

  Platform other_model = socket_view;  // another model: the L3 tells the chips apart
  other_model.cpu_model = "AMD EPYC 9B14";
  const sfc::PlatformComparison other = sfc::compare_platforms(other_model, ccd_view);
  CHECK(other.match == PlatformMatch::foreign);
  CHECK(other.describe().find("l3_bytes") != std::string::npos);

  Platform unnamed = socket_view, unnamed_twin = ccd_view;  // no model read: nothing says they are twins
  unnamed.cpu_model.clear();
  unnamed_twin.cpu_model.clear();
  CHECK(match(unnamed, unnamed_twin) == PlatformMatch::foreign);

  Platform other_l2 = socket_view;  // the same model with another L2 is no twin: L2 decides k_block_factor
  other_l2.l2_bytes = std::size_t(4) << 20;
  CHECK(match(other_l2, ccd_view) == PlatformMatch::foreign);
}

TEST_CASE("platform: a legacy record (L3 and NUMA unknown) is compatible at best") {
  Platform legacy = machine("zen5-2core");
  legacy.l3_bytes = 0;
  legacy.numa_nodes = 0;
  CHECK(legacy.legacy());
  const sfc::PlatformComparison c = sfc::compare_platforms(legacy, machine("zen5-2core-twin"));
  CHECK(c.match == PlatformMatch::compatible);
  CHECK(c.describe().find("unknown") != std::string::npos);
  legacy.l2_bytes = 4 << 20;
  CHECK(match(legacy, machine("zen5-2core")) == PlatformMatch::foreign);
}

TEST_CASE(
    "platform: HWLOC_XMLFILE makes sfc-tune see another machine, a table built on one Zen 5 loads on its "
    "twin") {
  const sfc::test::TempDir dir;
  const std::string topologies = std::string(SFC_SOURCE_DIR) + "/tests/data/topologies/";
  sfc::TuningTable table;
  table.platform = machine("zen5-2core");
  table.calibration = {200, 60};
  table.save(dir.file("zen5.table"));
  const auto query = [&](const std::string& topology, const std::string& more = "") {
    return sfc::test::run_cli("query 700 1500 3000 --threads 2 --table " + dir.file("zen5.table") + more,
                              "HWLOC_XMLFILE=" + topologies + topology + ".xml");
  };
  auto r = query("zen5-2core-twin");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("platform exact") != std::string::npos);
  r = query("zen5-16core");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("platform compatible") != std::string::npos);
  r = query("xeon-2core");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("l2_bytes: tuned 1048576, here 2097152") != std::string::npos);
  r = query("xeon-2core", " --platform any");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("platform foreign") != std::string::npos);
  r = sfc::test::run_cli("db info --db " + dir.file("zen5.table"),
                         "HWLOC_XMLFILE=" + topologies + "zen5-2core-twin.xml");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("on this machine: exact") != std::string::npos);
  CHECK(r.output.find("L3 32768 KiB") != std::string::npos);
}
