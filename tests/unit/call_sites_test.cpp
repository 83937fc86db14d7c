// Call sites in the summary: events' (module, offset) mapped through each rank's own `module`
// records and summed over ranks, and addresses resolved by addr2line against a function of this
// binary whose address is known.

#include <link.h>

#include <cstdint>
#include <filesystem>

#include <gtest/gtest.h>

#include "report/trace_report.hpp"
#include "sim_builder.hpp"
#include "trace/reader.hpp"
#include "trace/summary.hpp"

// A function whose address the resolution test looks up (not inlined, not static: in the
// symbol table whether or not the build has debug information).
extern "C" __attribute__((noinline)) int commgauge_call_site_probe(int x) {
  return x * 3 + 1;
}

namespace commgauge::trace {
namespace {

using testing::TraceBuilder;

void at(Event& e, std::uint32_t module, std::uint64_t offset) {
  e.set(kSite);
  e.site_module = module;
  e.site_offset = offset;
}

TEST(CallSites, SummedOverRanksThroughEachRanksOwnModuleRecords) {
  TraceBuilder b(2);
  // The same two objects, numbered in a different order on each rank.
  b.module(0, 1, "/bin/app").module(0, 2, "/lib/libx.so");
  b.module(1, 1, "/lib/libx.so").module(1, 2, "/bin/app");
  const std::uint32_t app[2] = {1, 2}, libx[2] = {2, 1};
  for (std::uint32_t r = 0; r < 2; ++r) {
    for (int i = 0; i < 3; ++i) {
      b.compute(r, model::Picoseconds(1'000'000));
      b.call(r, fn::Barrier, [&](Event& e) {
        e.end_tick = e.start_tick + 2'000'000;  // 2 us
        at(e, app[r], 0x1234);
      });
    }
    b.call(r, fn::Allreduce, [&](Event& e) {
      e.set(kBytes);
      e.bytes = 8;
      at(e, libx[r], 0x40);
    });
    b.call(r, fn::Barrier, [&](Event& e) { at(e, 0, 0x7f0000001000ULL + r); });  // loaded later
  }
  const TraceSummary s = summarize(TraceReader(b.write("call-sites")));
  ASSERT_EQ(s.call_sites.size(), 4u);
  const auto& barrier = s.call_sites.at({"/bin/app", 0x1234, fn::Barrier});
  EXPECT_EQ(barrier.ranks, 2u);
  EXPECT_EQ(barrier.totals.calls, 6u);
  EXPECT_NEAR(barrier.totals.seconds, 6 * 2e-6, 1e-12);
  const auto& allreduce = s.call_sites.at({"/lib/libx.so", 0x40, fn::Allreduce});
  EXPECT_EQ(allreduce.ranks, 2u);
  EXPECT_EQ(allreduce.totals.bytes, 16u);
  // Absolute addresses stay apart per address, without a module.
  EXPECT_EQ(s.call_sites.at({"", 0x7f0000001000ULL, fn::Barrier}).ranks, 1u);
  EXPECT_EQ(s.call_sites.at({"", 0x7f0000001001ULL, fn::Barrier}).ranks, 1u);
  // Unresolved, a site reads as the object's name and the address in it.
  const std::string text = report::trace_summary_text(s);
  EXPECT_NE(text.find("app+0x1234"), std::string::npos) << text;
  EXPECT_NE(text.find("libx.so+0x40"), std::string::npos) << text;
}

TEST(CallSites, ResolvedByAddr2lineToTheEnclosingFunction) {
  // This program's load bias: the first object dl_iterate_phdr reports is the program.
  std::uintptr_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<std::uintptr_t*>(out) = info->dlpi_addr;
        return 1;
      },
      &bias);
  const auto address = reinterpret_cast<std::uintptr_t>(&commgauge_call_site_probe);
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  TraceSummary s;
  s.call_sites[{self, address - bias + 4, fn::Send}].totals.calls = 1;  // inside the function
  s.call_sites[{"/nonexistent/object", 0x10, fn::Recv}].totals.calls = 1;
  EXPECT_EQ(resolve_call_sites(s, 60), 1u);
  const auto it = s.site_locations.find({self, address - bias + 4});
  ASSERT_NE(it, s.site_locations.end());
  EXPECT_EQ(it->second.function, "commgauge_call_site_probe");
  EXPECT_FALSE(s.site_locations.count({"/nonexistent/object", 0x10}));
  EXPECT_EQ(commgauge_call_site_probe(1), 4);
}

}  // namespace
}  // namespace commgauge::trace
