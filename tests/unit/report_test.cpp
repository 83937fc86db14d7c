// The reports users read: tables, summaries and JSON sections against hand-computed values.

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/error.hpp"

#include "report/heldout_report.hpp"
#include "report/loggp_report.hpp"
#include "report/prediction.hpp"
#include "report/share_report.hpp"
#include "report/text_table.hpp"

namespace commgauge::report {
namespace {

TEST(TextTable, PadsColumnsRightAlignsNumbersAndRulesTheHeader) {
  TextTable t({"kind", "bytes", "us"});
  t.add_row({"pingpong", "8", "0.5"});
  t.add_row({"a", "65536", "12.25"});
  // Widths 8, 5, 5; two spaces between columns; trailing blanks cut; rule 8 + 5 + 5 + 4 = 22.
  EXPECT_EQ(t.render(),
            "kind      bytes     us\n"
            "----------------------\n"
            "pingpong      8    0.5\n"
            "a         65536  12.25\n");
}

TEST(TableSink, EveryTableInLongFormWithRfc4180Quoting) {
  TextTable a({"size_B", "verdict"});
  a.add_row({"8", "ok"});
  a.add_row({"4096", "confirmed: 14 of 14, \"exact\""});
  TextTable b({"rank", "host,name"});
  b.add_row({"0", "n1"});
  TableSink sink;
  // render() hands the table over and returns its text unchanged.
  EXPECT_EQ(render(a, &sink, "switches"), a.render());
  EXPECT_EQ(render(b, &sink, "ranks"), b.render());
  EXPECT_EQ(render(b, nullptr, "ignored"), b.render());
  EXPECT_EQ(sink.size(), 2u);
  EXPECT_EQ(sink.csv(),
            "table,row,column,value\n"
            "switches,0,size_B,8\n"
            "switches,0,verdict,ok\n"
            "switches,1,size_B,4096\n"
            "switches,1,verdict,\"confirmed: 14 of 14, \"\"exact\"\"\"\n"
            "ranks,0,rank,0\n"
            "ranks,0,\"host,name\",n1\n");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(TextTable, NumbersHaveSignificantDigitsAndNamesForTheUndefined) {
  EXPECT_EQ(number(1234.5678), "1235");
  EXPECT_EQ(number(0.000123456, 3), "0.000123");
  EXPECT_EQ(number(std::nan("")), "n/a");
  EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "inf");
}

// Three held-out ping-pongs measured at 1, 2 and 4 us and an allreduce at 2 us; loggp predicts
// 1.1, 1.8, 5 and 1 us: E_rel +10 %, -10 %, +25 %, -50 %. Ping-pong: median |E_rel| 10 %, worst
// 25 % at 32 B; allreduce: 50 % both. loggpo predicts nothing and says why.
struct HeldOutCase {
  measure::HeldOutResult result;
  std::vector<HeldOutPrediction> predictions;
  HeldOutCase() {
    auto point = [](measure::HeldOutKind kind, std::uint64_t bytes, double us) {
      measure::HeldOutPoint p;
      p.kind = kind;
      p.bytes = bytes;
      p.rounds_us = {us, us, us};
      p.time.median_us = us;
      p.time.lower_us = us * 0.9;
      p.time.upper_us = us * 1.1;
      return p;
    };
    using K = measure::HeldOutKind;
    result.points = {point(K::pingpong, 8, 1), point(K::pingpong, 16, 2), point(K::pingpong, 32, 4),
                     point(K::allreduce, 8, 2)};
    result.seed = 42;
    result.collectives = true;
    predictions = {{"loggp", {1.1, 1.8, 5.0, 1.0}, ""},
                   {"loggpo",
                    {std::nullopt, std::nullopt, std::nullopt, std::nullopt},
                    "no formulas for this range"}};
  }
};

TEST(HeldOutReport, SummaryIsTheMedianAndWorstAbsoluteErrorPerKind) {
  const HeldOutCase c;
  const auto s = summarise_heldout(c.result, c.predictions);
  ASSERT_EQ(s.size(), 2u);  // loggpo has no prediction, so no summary
  EXPECT_EQ(s[0].kind, "allreduce");
  EXPECT_NEAR(s[0].median_abs_error, 0.5, 1e-12);
  EXPECT_EQ(s[0].points, 1u);
  EXPECT_EQ(s[1].model, "loggp");
  EXPECT_EQ(s[1].kind, "pingpong");
  EXPECT_NEAR(s[1].median_abs_error, 0.1, 1e-12);
  EXPECT_NEAR(s[1].worst_abs_error, 0.25, 1e-12);
  EXPECT_EQ(s[1].worst_bytes, 32u);
  EXPECT_EQ(s[1].points, 3u);
}

TEST(HeldOutReport, TableAndJsonSayTheSame) {
  const HeldOutCase c;
  const std::string table = heldout_table(c.result, c.predictions);
  EXPECT_NE(table.find("cells of loggp's first 3 rounds, shuffled with its sweep, seed 42"),
            std::string::npos)
      << table;
  // Widths: kind 9 (allreduce), bytes 5, measured 21 and the E_rel columns 11 and 12 (headers).
  EXPECT_NE(table.find("\npingpong      16           2 [1.8, 2.2]      -10.0 %             -\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("loggp predicts the held-out pingpong within 10.0 % median, 25.0 % worst "
                       "(at 32 B)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("loggpo: not applicable: no formulas for this range"), std::string::npos);
  const auto j = heldout_json(c.result, c.predictions);
  ASSERT_EQ(j["points"].size(), 4u);
  EXPECT_NEAR(j["points"][2]["e_rel"]["loggp"].get<double>(), 0.25, 1e-12);
  EXPECT_FALSE(j["points"][2]["predicted_us"].contains("loggpo"));
  EXPECT_EQ(j["points"][3]["kind"], "allreduce");
  EXPECT_DOUBLE_EQ(j["points"][1]["ci95_us"][1].get<double>(), 2.2);
  EXPECT_EQ(j["summary"].size(), 2u);
  EXPECT_EQ(j["not_applicable"]["loggpo"], "no formulas for this range");
}

// share: E_rel in percent per communication, E_abs their mean absolute value (seed 003 §VI-B).
TEST(ShareReport, ErrorsInPercentAndTheirMeanAbsoluteValue) {
  const auto [e_rel, e_abs] = errors({2.0, 3.0, 1.5}, {2.0, 4.0, 1.0});
  ASSERT_EQ(e_rel.size(), 3u);
  EXPECT_NEAR(e_rel[0], 0.0, 1e-12);
  EXPECT_NEAR(e_rel[1], -25.0, 1e-12);
  EXPECT_NEAR(e_rel[2], 50.0, 1e-12);
  EXPECT_NEAR(e_abs, 25.0, 1e-12);
  const auto [none, none_abs] = errors({1.0}, {0.0});  // nothing measured: undefined, not inf
  EXPECT_TRUE(std::isnan(none[0]));
  EXPECT_TRUE(std::isnan(none_abs));
}

// The self-check's line for the bisection sizes names only the sets the run produced: with
// --no-calibrate there is no calibrated set, so no calibrated figure.
TEST(LoggpReport, TheBisectionSizesLineNamesOnlyTheSetsTheRunFitted) {
  measure::LoggpResult r;
  r.seed_check.unfitted = 3;
  r.seed_check.max_abs_unfitted = 0.125;
  r.calibrated_check = r.seed_check;
  const std::string seeds_only = loggp_table(r);
  EXPECT_NE(seeds_only.find("at the 3 bisection sizes (measured later, not fitted): seeds' "
                            "estimators 12.50 %"),
            std::string::npos)
      << seeds_only;
  EXPECT_EQ(seeds_only.find("calibrated 12.50 %"), std::string::npos);

  r.calibrated.intervals.resize(1);
  r.calibrated_check.max_abs_unfitted = 0.0425;
  const std::string both = loggp_table(r);
  EXPECT_NE(both.find("at the 3 bisection sizes (measured later, not fitted): calibrated 4.25 %, "
                      "seeds' estimators 12.50 %"),
            std::string::npos)
      << both;
}

}  // namespace
// predict --measured's CSV: sizes as users write them, times finite and above 0 that parse
// whole, a header only on the first line, an empty file an error (a time of "2xyz" was read as
// 2, "8KiB" as 8 B, "inf" accepted, an empty file taken as no measurements).
TEST(MeasuredCsv, ReadsWhatItSaysAndRefusesTheRestNamingTheLine) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("cg-measured-" + std::to_string(::getpid()) + ".csv");
  const auto read = [&](const std::string& text) {
    std::ofstream(file) << text;
    return report::read_measured(file);
  };
  const auto m = read("size,rtt_us\n8,3.0\n 8KiB ; 12.5 \n# a comment\n\n64kB,20\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].bytes, 8u);
  EXPECT_DOUBLE_EQ(m[0].one_way_us, 1.5);  // the header names a round trip
  EXPECT_EQ(m[1].bytes, 8192u);
  EXPECT_DOUBLE_EQ(m[1].one_way_us, 6.25);
  EXPECT_EQ(m[2].bytes, 64000u);
  for (const std::string bad : {"1024,2xyz\n", "1024,inf\n", "8,nan\n", "8,0\n", "8,-1\n", "-8,1\n",
                                "8,1,2\n", "8\n", "8,1\nsize,time\n", ""}) {
    EXPECT_THROW(read(bad), InputError) << bad;
  }
  try {
    read("8,1\n16,2xyz\n");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string() + ":2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(file);
}

}  // namespace commgauge::report
