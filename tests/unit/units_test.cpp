#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/child_job.hpp"
#include "common/error.hpp"
#include "common/units.hpp"

namespace commgauge {
namespace {

TEST(ByteSize, Units) {
  EXPECT_EQ(parse_byte_size("8", "x"), 8u);
  EXPECT_EQ(parse_byte_size("0", "x"), 0u);
  EXPECT_EQ(parse_byte_size("64KiB", "x"), 65536u);
  EXPECT_EQ(parse_byte_size("20MiB", "x"), 20u * 1024 * 1024);
  EXPECT_EQ(parse_byte_size("1M", "x"), 1048576u);
  EXPECT_EQ(parse_byte_size("2kB", "x"), 2000u);
  EXPECT_EQ(parse_byte_size("1.5KiB", "x"), 1536u);
}

TEST(ByteSize, Errors) {
  EXPECT_THROW(parse_byte_size("-1", "--size"), InputError);
  EXPECT_THROW(parse_byte_size("abc", "--size"), InputError);
  EXPECT_THROW(parse_byte_size("3 parsecs", "--size"), InputError);
  EXPECT_THROW(parse_byte_size("1.3", "--size"), InputError);
  try {
    parse_byte_size("-5", "--size");
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--size: a size must be >= 0"));
  }
}

TEST(SizeList, ListAndRange) {
  EXPECT_EQ(parse_size_list("8,64,1KiB", "x"), (std::vector<std::uint64_t>{8, 64, 1024}));
  EXPECT_EQ(parse_size_list("1:16", "x"), (std::vector<std::uint64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(parse_size_list("0:4", "x"), (std::vector<std::uint64_t>{0, 1, 2, 4}));
  EXPECT_EQ(parse_size_list("1:100:10", "x"), (std::vector<std::uint64_t>{1, 10, 100}));
  EXPECT_THROW(parse_size_list("16:1", "x"), InputError);
  EXPECT_THROW(parse_size_list("1:16:1", "x"), InputError);
  // An infinite factor gave the first size alone (red-team, 2026-12-05).
  for (const char* bad : {"8:1KiB:inf", "8:1KiB:nan", "8:1KiB:1e999"})
    EXPECT_THROW(parse_size_list(bad, "x"), InputError) << bad;
}

// A job past its time limit gets SIGTERM and then its grace before SIGKILL: one that needs a
// while to write its last data (as mpirun's ranks do) ends by itself, with what it wrote.
// Found by a red-team run: "1:1000000:1.0000000001" ran its loop 10^11 times (predict hung).
TEST(SizeList, AtMostTenThousandSizes) {
  // 9905 steps (ln 1024 / ln 1.0007): inside the bound; the distinct sizes are at most 1024.
  const auto fine = parse_size_list("1:1024:1.0007", "--sizes");
  EXPECT_EQ(fine.front(), 1u);
  EXPECT_LE(fine.size(), 1024u);
  EXPECT_THROW(parse_size_list("1:1024:1.0006", "--sizes"), InputError);  // 11556 steps
  try {
    parse_size_list("1:1000000:1.0000000001", "--sizes");
    ADD_FAILURE() << "a range of 1.4e11 steps was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("at most 10000 sizes"));
  }
  std::string list = "1";
  for (int i = 2; i <= 10000; ++i)
    list += "," + std::to_string(i);
  EXPECT_EQ(parse_size_list(list, "--sizes").size(), 10000u);
  EXPECT_THROW(parse_size_list(list + ",10001", "--sizes"), InputError);
}

TEST(ChildJob, TheTimeLimitsSigtermLeavesTheJobItsGrace) {
  const std::string done = "/tmp/commgauge-child-job-" + std::to_string(::getpid());
  std::remove(done.c_str());
  const int status = run_child_job(
      {{"sh", "-c",
        "trap 'sleep 1; echo written > " + done + "; exit 0' TERM; while :; do sleep 0.05; done"},
       {},
       0.2,
       {},
       30,
       nullptr});
  EXPECT_EQ(status, 0);
  std::ifstream in(done);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "written");
  std::remove(done.c_str());
  // Without grace for it, the same job is killed (128 + SIGKILL) before it writes.
  const int killed = run_child_job(
      {{"sh", "-c",
        "trap 'sleep 5; echo written > " + done + "; exit 0' TERM; while :; do sleep 0.05; done"},
       {},
       0.2,
       {},
       0.5,
       nullptr});
  EXPECT_EQ(killed, 128 + 9);
  EXPECT_FALSE(std::ifstream(done).good());
}

// A launcher that kills its rank as soon as it gets SIGTERM itself (as MPICH's Hydra does): the
// rank's last data is lost when the group is signalled at once, and kept when the rank, found by
// its environment, is ended first while the launcher is stopped.
TEST(ChildJob, EndFirstEndsTheRanksBeforeALauncherThatKillsThem) {
  const std::string tag = std::to_string(::getpid());
  const std::string done = "/tmp/commgauge-child-job-rank-" + tag;
  const std::string mark = "COMMGAUGE_TEST_RANK=" + tag;
  const std::string launcher =
      "env " + mark + " sh -c \"trap 'sleep 1; echo written > " + done +
      "; exit 0' TERM; sleep 1000 & wait\" & r=$!; trap 'kill -9 $r; exit 1' TERM; wait $r";
  for (const bool first : {false, true}) {
    std::remove(done.c_str());
    ChildJob job{{"sh", "-c", launcher}, {}, 2, {}, 30, nullptr};
    if (first) job.end_first = [&] { return processes_with_environment({mark}); };
    run_child_job(job);
    std::ifstream in(done);
    std::string text;
    in >> text;
    EXPECT_EQ(text, first ? "written" : "") << (first ? "ended first" : "group at once");
  }
  std::remove(done.c_str());
  EXPECT_TRUE(processes_with_environment({mark}).empty());
}

}  // namespace
}  // namespace commgauge
