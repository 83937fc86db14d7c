// The machine profile: schema, semantic checks, examples, and the round trip
// virtual network -> loggp + overlap -> profile -> prediction.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include <unistd.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/text_file.hpp"
#include "failing_transport.hpp"
#include "link_fixtures.hpp"
#include "measure/loggp.hpp"
#include "measure/overlap.hpp"
#include "measure/trust.hpp"
#include "model/models.hpp"
#include "net/virtual_network.hpp"
#include "profile/json_file.hpp"
#include "profile/link_params_json.hpp"
#include "profile/profile.hpp"

namespace commgauge::profile {
namespace {

using ::testing::HasSubstr;
using namespace model::literals;

nlohmann::json minimal_profile() {
  return {{"format", "commgauge-profile"},
          {"version", 1},
          {"link_classes",
           {{"intra_node",
             {{"link", link_params_to_json(commgauge::testing::loggp_link())},
              {"source", {{"kind", "measured"}, {"link", "local"}}}}}}}};
}

std::string error_of(const nlohmann::json& doc) {
  try {
    profile_from_json(doc, "p.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Results are written safely: a symlink at the target is replaced, never followed; a user's file
// named like a temporary is never touched; bytes that are not UTF-8 do not lose the result; a
// failed write leaves neither a result nor a temporary.
TEST(JsonFile, WritesAtomicallyAndNeverThroughASymlink) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("cg-json-file-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "victim.txt") << "keep";
  std::ofstream(dir / "out.json.tmp") << "mine";
  fs::create_symlink(dir / "victim.txt", dir / "out.json");
  write_json_file(dir / "out.json", nlohmann::json{{"argv", std::string("a\xff\xfe")}});
  EXPECT_FALSE(fs::is_symlink(dir / "out.json"));
  EXPECT_EQ(read_json_file(dir / "out.json")["argv"], "a\xef\xbf\xbd\xef\xbf\xbd");
  std::ifstream victim(dir / "victim.txt"), mine(dir / "out.json.tmp");
  std::string v, m;
  victim >> v;
  mine >> m;
  EXPECT_EQ(v, "keep");
  EXPECT_EQ(m, "mine");
  // Into a directory that does not exist: an error naming the file, nothing left behind.
  EXPECT_THROW(commgauge::write_text_file(dir / "none" / "x.json", "{}"), InputError);
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir))
    ++files;
  EXPECT_EQ(files, 3u);  // victim.txt, out.json.tmp, out.json
  fs::remove_all(dir);
}

TEST(Profile, ReadsAMinimalProfile) {
  const Profile p = profile_from_json(minimal_profile(), "p.json");
  ASSERT_TRUE(p.classes.contains("intra_node"));
  EXPECT_DOUBLE_EQ(p.classes.at("intra_node").link.latency_us, 5.0);
  EXPECT_EQ(profile_to_json(p)["link_classes"]["intra_node"]["link"],
            minimal_profile()["link_classes"]["intra_node"]["link"]);
}

TEST(Profile, ErrorsNameTheField) {
  auto doc = minimal_profile();
  doc["version"] = 3;
  EXPECT_THAT(error_of(doc), HasSubstr("p.json: /version: expected 1"));
  doc = minimal_profile();
  doc["link_classes"]["intra_node"]["link"]["ranges"][0].erase("o_s_us");
  EXPECT_THAT(error_of(doc),
              HasSubstr("/link_classes/intra_node/link: /ranges/0/o_s_us: required"));
  doc = minimal_profile();
  doc["link_classes"]["intra_node"]["link"]["ranges"][0]["g_us"] = -2;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/g_us: must be >= 0"));
  doc = minimal_profile();
  doc["link_classes"]["intra_node"].erase("source");
  EXPECT_THAT(error_of(doc),
              HasSubstr("/link_classes/intra_node/source: required field is missing"));
  doc = minimal_profile();
  doc["link_classes"]["cross_rack"] = doc["link_classes"]["intra_node"];
  EXPECT_THAT(error_of(doc), HasSubstr("/link_classes/cross_rack: unknown field"));
}

TEST(Profile, MeasuredInterNodeMustComeFromARealLink) {
  auto doc = minimal_profile();
  doc["link_classes"]["inter_node"] = doc["link_classes"]["intra_node"];
  EXPECT_THAT(error_of(doc),
              HasSubstr("a measured inter_node class must come from a real network link"));
  doc["link_classes"]["inter_node"]["source"]["link"] = "namespaces";
  EXPECT_NO_THROW(profile_from_json(doc, "p.json"));
}

TEST(Profile, NegativeLatencyIsAllowedAndFlagged) {
  auto doc = minimal_profile();
  doc["link_classes"]["intra_node"]["link"]["L_us"] = -0.5;
  const Profile p = profile_from_json(doc, "p.json");
  ASSERT_EQ(p.flags.size(), 1u);
  EXPECT_THAT(p.flags[0], HasSubstr("negative"));
}

TEST(Profile, ShippedExamplesAreValid) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(COMMGAUGE_SOURCE_DIR "/examples/profiles")) {
    SCOPED_TRACE(e.path().string());
    const Profile p = read_profile(e.path());
    EXPECT_FALSE(p.classes.empty());
    ++n;
  }
  EXPECT_GE(n, 6);
  // seed 000 Table 2, Open MPI/openib: eel 5.96 us = o + L + o, rendezvous from 12289 B.
  const auto l = read_link_for_prediction(
      COMMGAUGE_SOURCE_DIR "/examples/profiles/seed000-table2-openmpi-openib.json", "");
  EXPECT_EQ(l.link_class, "inter_node");
  const model::CostModel c(l.link);
  EXPECT_NEAR(model::to_microseconds(c.blocking_one_way(1)), 5.96, 1e-9);
  EXPECT_EQ(l.link.rendezvous_threshold_bytes(), 12289u);
}

// A profile whose measured sizes run backwards was loaded ("outside the measured sizes
// 99999999-16384 B"): refused, naming the class.
TEST(Profile, MeasuredSizesMustNotRunBackwards) {
  std::ifstream in(COMMGAUGE_SOURCE_DIR "/examples/profiles/seed000-table2-openmpi-openib.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  auto& source = doc["link_classes"]["inter_node"]["source"];
  source["measured_min_bytes"] = 99999999;
  source["measured_max_bytes"] = 16384;
  const auto path = std::filesystem::temp_directory_path() /
                    ("cg-backwards-" + std::to_string(::getpid()) + ".json");
  write_json_file(path, doc);
  try {
    read_link_for_prediction(path, "inter_node");
    ADD_FAILURE() << "measured sizes running backwards were accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("/link_classes/inter_node/source: "
                                               "measured_min_bytes 99999999 is above "
                                               "measured_max_bytes 16384"));
  }
  std::filesystem::remove(path);
}

TEST(Profile, PredictionInputCanBeASingleLink) {
  const auto path =
      std::filesystem::temp_directory_path() / ("cg-link-" + std::to_string(::getpid()) + ".json");
  auto doc = link_params_to_json(commgauge::testing::loggp_link());
  doc["points"] = nlohmann::json::array({{{"size_bytes", 4}}, {{"size_bytes", 4096}}});
  write_json_file(path, doc);
  const auto l = read_link_for_prediction(path, "");
  EXPECT_EQ(l.link_class, "");
  ASSERT_TRUE(l.measured_bytes.has_value());
  EXPECT_EQ(l.measured_bytes->first, 4u);
  EXPECT_EQ(l.measured_bytes->second, 4096u);
  EXPECT_THROW(read_link_for_prediction(path, "inter_node"), InputError);
  std::filesystem::remove(path);
}

// loggp and overlap on a virtual network with a rendezvous range, merged into a profile link:
// predict matches the virtual network's own round-trip times within 2 %, and overlap classifies
// the progress mode.
void round_trip_through_profile(model::Progress progress, double control_us = -1) {
  auto truth = commgauge::testing::loggps_link(progress);
  // A rendezvous request cheaper than a message's overhead (O' below o): loggp's curves alone
  // cannot tell O' from o, overlap measures it, and the calibrated set is fitted again with it.
  truth.ranges[1].control_send_us = control_us;
  truth.ranges[1].control_recv_us = control_us;
  net::VirtualNetwork net(truth);
  measure::LoggpResult loggp;
  const measure::LoggpOptions lo;
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_loggp(t, lo, nullptr)) loggp = *r;
  });
  measure::OverlapResult overlap;
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_overlap(t, {}, loggp.link, nullptr)) overlap = *r;
  });
  ASSERT_EQ(overlap.ranges.size(), 2u);
  ASSERT_TRUE(overlap.ranges[1].rendezvous);
  EXPECT_EQ(overlap.ranges[1].progress, progress);
  EXPECT_EQ(overlap.ranges[1].mechanism, progress == model::Progress::dependent
                                             ? model::TransferMechanism::RAT
                                             : model::TransferMechanism::RTA);
  EXPECT_TRUE(overlap.agrees_with_loggp.value_or(false));
  measure::adopt_overlap(loggp, lo, overlap);
  const model::LinkParams& profiled = loggp.link;
  if (control_us >= 0) {
    EXPECT_NEAR(profiled.ranges[1].control_send_us, control_us, 0.02 * control_us);
  }
  // The calibrated set still reproduces the curves it came from, and the class is trusted.
  EXPECT_LT(loggp.calibrated_check.max_abs_all, 0.02);
  EXPECT_TRUE(measure::assess_trust(loggp.calibrated_check, {}).trusted);
  const model::CostModel truth_cost(truth);
  for (const char* name : {"loggps", "loggpo"}) {
    const model::CommModel m = model::make_model(name, profiled);
    for (std::uint64_t k : {1u, 64u, 4096u, 11585u, 16384u, 131072u, 1048576u}) {
      const double want = model::to_microseconds(model::round_trip(truth_cost, k));
      EXPECT_NEAR(model::to_microseconds(m.round_trip(k)), want, 0.02 * want) << name << " " << k;
    }
  }
  // The LogGPO overlap scenario follows the measured progress mode too.
  const model::CommModel o = model::make_model("loggpo", profiled);
  const auto predicted = o.isend_compute_wait(131072, model::to_picoseconds(500), 0_ps);
  const auto exact =
      model::isend_compute_wait(truth_cost, 131072, model::to_picoseconds(500), 0_ps);
  EXPECT_NEAR(model::to_microseconds(predicted.receiver_done),
              model::to_microseconds(exact.receiver_done),
              0.02 * model::to_microseconds(exact.receiver_done));
}

// loggp's S claimed at 20000 B where the virtual network switches at 12289 B: overlap's sweep
// (powers of 2) sees 16384 B synchronizing and 8192 B eager, re-measures 19999, 20000, 8192 and
// 16384 B three times, and reports the disagreement unresolved with both figures.
TEST(OverlapAgainstLoggp, AWrongSwitchStaysUnresolvedWithBothFigures) {
  const auto truth = commgauge::testing::loggps_link(model::Progress::dependent);
  model::LinkParams claimed = truth;
  claimed.ranges[1].from_bytes = 20000;
  net::VirtualNetwork net(truth);
  measure::OverlapResult overlap;
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_overlap(t, {}, claimed, nullptr)) overlap = *r;
  });
  EXPECT_EQ(overlap.switch_bytes, 16384u);
  EXPECT_FALSE(overlap.agrees_with_loggp.value_or(true));
  EXPECT_EQ(overlap.resolution,
            "unresolved after re-measuring 4 sizes 3 time(s) (synchronizing: 8192 B 0 of 4, "
            "16384 B 4 of 4, 19999 B 3 of 3, 20000 B 3 of 3): loggp's S 20000 B, overlap's S "
            "16384 B (first sweep: 16384 B)");
  // The re-measured sizes joined the points, in order.
  ASSERT_TRUE(std::is_sorted(overlap.points.begin(), overlap.points.end(),
                             [](const auto& a, const auto& b) { return a.bytes < b.bytes; }));
  EXPECT_TRUE(std::any_of(overlap.points.begin(), overlap.points.end(),
                          [](const auto& p) { return p.bytes == 19999 && p.synchronizing; }));
  // Its ranges are its own reading, consistent with its S (not loggp's, which it contradicts):
  // eager, then rendezvous from 16384 B with the virtual link's dependent progress (RAT).
  ASSERT_EQ(overlap.ranges.size(), 2u);
  EXPECT_FALSE(overlap.ranges[0].rendezvous);
  EXPECT_EQ(overlap.ranges[1].from_bytes, 16384u);
  EXPECT_TRUE(overlap.ranges[1].rendezvous);
  EXPECT_EQ(overlap.ranges[1].progress, model::Progress::dependent);
  EXPECT_EQ(overlap.ranges[1].mechanism, model::TransferMechanism::RAT);
  // What the profile merges into loggp's link is still the sweep read over loggp's own ranges:
  // its rendezvous range (from 20000 B) gets the measured progress, mechanism and O'.
  const model::LinkParams merged = measure::merge_overlap(claimed, overlap);
  ASSERT_EQ(merged.ranges.size(), 2u);
  EXPECT_EQ(merged.ranges[1].from_bytes, 20000u);
  EXPECT_EQ(merged.ranges[1].progress, model::Progress::dependent);
  EXPECT_EQ(merged.ranges[1].transfer, "RAT");
  EXPECT_GT(merged.ranges[1].control_send_us, 0);
  // Told the truth, the first sweep agrees and nothing is re-measured.
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_overlap(t, {}, truth, nullptr)) overlap = *r;
  });
  EXPECT_TRUE(overlap.agrees_with_loggp.value_or(false));
  EXPECT_TRUE(overlap.resolution.empty());
}

// The receiver's side of a virtual link, descheduled as on a busy machine: every `every`-th
// computation it is asked for runs 4 times as long (it comes back late, its peer having moved
// on), the others as asked.
class DescheduledReceiver final : public commgauge::testing::ForwardingTransport {
 public:
  DescheduledReceiver(net::Transport& t, int every) : ForwardingTransport(t), every_(every) {}
  void compute(double us) override {
    if (us > 0 && ++computations_ % every_ == 0) us *= 4;
    ForwardingTransport::compute(us);
  }

 private:
  int every_;
  long computations_ = 0;
};

measure::OverlapResult overlap_with_descheduled_receiver(model::Progress progress, int every) {
  const auto truth = commgauge::testing::loggps_link(progress);
  net::VirtualNetwork net(truth);
  measure::OverlapResult overlap;
  net.run([&](net::Transport& t) {
    if (t.role() == net::Role::dest) {
      DescheduledReceiver late(t, every);
      measure::measure_overlap(late, {}, truth, nullptr);
    } else if (auto r = measure::measure_overlap(t, {}, truth, nullptr)) {
      overlap = *r;
    }
  });
  return overlap;
}

// A receiver descheduled in every 4th computation reads about a quarter of E4's trials as RTA
// (it comes back after the sender has moved the data); the low end of 11 trials, which decided
// Tm before, read RAT as RTA that way under load in CI. Voted trial by trial, every
// synchronizing size still reads DCP with RAT, and the range's pooled votes decide it.
TEST(OverlapUnderLoad, AReceiverDescheduledInAQuarterOfTheTrialsKeepsDcpWithRat) {
  const auto overlap = overlap_with_descheduled_receiver(model::Progress::dependent, 4);
  ASSERT_EQ(overlap.ranges.size(), 2u);
  const auto& range = overlap.ranges[1];
  ASSERT_TRUE(range.rendezvous);
  EXPECT_TRUE(range.resolved);
  EXPECT_EQ(range.progress, model::Progress::dependent);
  EXPECT_EQ(range.mechanism, model::TransferMechanism::RAT);
  EXPECT_TRUE(range.supported);
  // The delays did reach the votes: some trials read RTA, and none ICP.
  EXPECT_LT(range.rat_votes.for_first, range.rat_votes.trials);
  EXPECT_GT(4 * range.rat_votes.for_first, 2 * range.rat_votes.trials);
  EXPECT_EQ(range.icp_votes.for_first, 0u);
  for (const auto& p : overlap.points) {
    if (!p.synchronizing) continue;
    EXPECT_EQ(p.progress, model::Progress::dependent) << p.bytes;
    EXPECT_EQ(p.mechanism, model::TransferMechanism::RAT) << p.bytes;
    EXPECT_TRUE(p.rat_votes.decided)
        << p.bytes << ": " << p.rat_votes.for_first << " of " << p.rat_votes.trials;
  }
  // With the ICP link the same delays cannot make a transfer wait for the sender: ICP with RTA.
  const auto icp = overlap_with_descheduled_receiver(model::Progress::independent, 4);
  ASSERT_EQ(icp.ranges.size(), 2u);
  EXPECT_TRUE(icp.ranges[1].resolved);
  EXPECT_EQ(icp.ranges[1].progress, model::Progress::independent);
  EXPECT_EQ(icp.ranges[1].mechanism, model::TransferMechanism::RTA);
}

// Descheduled in every other computation, E4 reads RAT in half its trials: no majority the sign
// test accepts, however often re-measured. The range is unresolved, says so with the counts,
// and the profile keeps no Scp or Tm for it (merge_overlap leaves loggp's range as it was).
TEST(OverlapUnderLoad, HalfTheTrialsEachWayLeaveTheRangeUnresolved) {
  const auto overlap = overlap_with_descheduled_receiver(model::Progress::dependent, 2);
  ASSERT_EQ(overlap.ranges.size(), 2u);
  const auto& range = overlap.ranges[1];
  ASSERT_TRUE(range.rendezvous);
  EXPECT_FALSE(range.rat_votes.decided)
      << range.rat_votes.for_first << " of " << range.rat_votes.trials;
  EXPECT_FALSE(range.resolved);
  EXPECT_FALSE(range.supported);
  ASSERT_FALSE(range.notes.empty());
  EXPECT_THAT(range.notes[0], HasSubstr(fmt::format("RAT in {} of {}", range.rat_votes.for_first,
                                                    range.rat_votes.trials)));
  // Undecided sizes were measured again before giving up.
  EXPECT_TRUE(std::any_of(overlap.points.begin(), overlap.points.end(),
                          [](const auto& p) { return p.remeasured == 3; }));
  const auto truth = commgauge::testing::loggps_link(model::Progress::dependent);
  const model::LinkParams merged = measure::merge_overlap(truth, overlap);
  EXPECT_EQ(merged.ranges[1].transfer, "");
  EXPECT_EQ(merged.ranges[1].control_send_us, truth.ranges[1].control_send_us);
}

// Where the receiver pulls the data itself (vader's single copy), a late MPI_Irecv that finds the
// request already there can copy the message before it returns, at some sizes and not others
// (seen at 8 KiB and 256 KiB, not at 16 KiB, in one profile). O'_r is the control overhead, which
// does not grow with the size: such a size's copy does not enter it.
TEST(OverlapControlOverheads, ALateReceiveThatAlsoCopiesTheMessageLeavesOPrimeRAsItWas) {
  const auto truth = commgauge::testing::loggps_link(model::Progress::dependent);
  net::VirtualNetwork net(truth);
  measure::OverlapResult overlap;
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_overlap(t, {}, truth, nullptr)) overlap = *r;
  });
  ASSERT_EQ(overlap.ranges.size(), 2u);
  ASSERT_TRUE(overlap.ranges[1].resolved);
  // The virtual network answers a late request in the receiver's next wait, not in MPI_Irecv:
  // each size's late receive is set to answer in the call, O'_r = 0.4 us more than MPI_Isend.
  std::size_t rendezvous = 0;
  for (auto& p : overlap.points) {
    if (!p.synchronizing) continue;
    p.irecv_late_us = p.isend_us + 0.4;
    ++rendezvous;
  }
  ASSERT_GE(rendezvous, 4u);
  EXPECT_NEAR(measure::merge_overlap(truth, overlap).ranges[1].control_recv_us, 0.4, 1e-9);
  // Every other one, the first on, also copies its message in the call, at 1 ns a byte (the
  // median over the sizes read 0.4 us plus a copy of 16 KiB).
  std::size_t i = 0;
  for (auto& p : overlap.points) {
    if (p.synchronizing && i++ % 2 == 0) p.irecv_late_us += 1e-3 * static_cast<double>(p.bytes);
  }
  EXPECT_NEAR(measure::merge_overlap(truth, overlap).ranges[1].control_recv_us, 0.4, 1e-9);
  // A per-byte change at 20000 B leaves 16384 B the only sweep size of the range below it, and
  // it copied: the two rendezvous ranges (same Scp and Tm) take the least over all their sizes.
  model::LinkParams changed = truth;
  changed.ranges.push_back(truth.ranges[1]);
  changed.ranges[2].from_bytes = 20000;
  const auto merged = measure::merge_overlap(changed, overlap);
  ASSERT_EQ(merged.ranges.size(), 3u);
  EXPECT_NEAR(merged.ranges[1].control_recv_us, 0.4, 1e-9);
  EXPECT_NEAR(merged.ranges[2].control_recv_us, 0.4, 1e-9);
  // A range loggp reads eager with acknowledgement (TA: no request to answer) shares nothing
  // with the rendezvous range above it, whatever its late receives read.
  model::LinkParams acknowledged = changed;
  acknowledged.ranges[1].rendezvous = false;
  acknowledged.ranges[1].transfer = "TA";
  for (auto& p : overlap.points) {
    if (p.synchronizing) p.irecv_late_us = p.isend_us + (p.bytes < 20000 ? 0.1 : 0.4);
  }
  const auto beside_ta = measure::merge_overlap(acknowledged, overlap);
  ASSERT_EQ(beside_ta.ranges.size(), 3u);
  EXPECT_NEAR(beside_ta.ranges[2].control_recv_us, 0.4, 1e-9);
  EXPECT_NEAR(measure::merge_overlap(changed, overlap).ranges[2].control_recv_us, 0.1, 1e-9);
}

// overlap over a virtual link whose source side fails once progress reports `at`; with
// `loggp`, compared with that link's S (as `overlap --loggp`).
std::optional<measure::OverlapResult> overlap_failing_at(
    const std::string& at, const std::optional<model::LinkParams>& loggp = std::nullopt) {
  net::VirtualNetwork net(commgauge::testing::loggps_link(model::Progress::dependent));
  std::optional<measure::OverlapResult> result;
  bool fail = false;
  commgauge::testing::FailAt sink(at, fail);
  net.run([&](net::Transport& t) {
    try {
      if (t.role() == net::Role::dest) {
        measure::measure_overlap(t, {}, std::nullopt, nullptr);
        return;
      }
      commgauge::testing::FailingTransport failing(t, fail);
      result = measure::measure_overlap(failing, {}, loggp, &sink);
    } catch (const TransportError&) {
      // the dest, its peer gone (and the source where nothing could be kept)
    }
  });
  return result;
}

TEST(OverlapInterrupted, KeepsTheSizesMeasuredBeforeTheFailure) {
  const auto sizes = measure::OverlapOptions{}.sweep_sizes();
  ASSERT_GT(sizes.size(), 3u);
  const auto r = overlap_failing_at(fmt::format("overlap {} B", sizes[3]));
  ASSERT_TRUE(r.has_value()) << "nothing kept";
  EXPECT_THAT(r->interrupted, HasSubstr("did not respond"));
  ASSERT_EQ(r->points.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(r->points[i].bytes, sizes[i]);
  EXPECT_FALSE(r->ranges.empty());
}

// With loggp's S claimed at 20000 B (the link switches at 12289 B): a failure while the sizes
// around both S are measured again keeps the first sweep, its disagreement unresolved; a sweep
// cut short is not re-measured at all.
TEST(OverlapInterrupted, WithLoggpTheDisagreementStaysUnresolvedWithTheFirstSweep) {
  model::LinkParams claimed = commgauge::testing::loggps_link(model::Progress::dependent);
  claimed.ranges[1].from_bytes = 20000;
  const auto sizes = measure::OverlapOptions{}.sweep_sizes();
  const auto r = overlap_failing_at("overlap: re-measuring S (2 of", claimed);
  ASSERT_TRUE(r.has_value()) << "nothing kept";
  EXPECT_THAT(r->interrupted, HasSubstr("did not respond"));
  EXPECT_EQ(r->points.size(), sizes.size()) << "the first sweep, no re-measured size";
  EXPECT_EQ(r->switch_bytes, 16384u);
  EXPECT_FALSE(r->agrees_with_loggp.value_or(true));
  EXPECT_EQ(r->resolution,
            "unresolved (interrupted while re-measuring; the first sweep's figure): loggp's S "
            "20000 B, overlap's S 16384 B");
  ASSERT_FALSE(r->ranges.empty());
  EXPECT_EQ(r->ranges.back().from_bytes, 16384u);  // its own reading
  EXPECT_TRUE(r->ranges.back().rendezvous);

  const auto cut = overlap_failing_at(fmt::format("overlap {} B", sizes[3]), claimed);
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->points.size(), 3u);
  EXPECT_EQ(cut->resolution,
            "unresolved (the sweep was interrupted before re-measuring): loggp's S 20000 B, "
            "overlap's S none");
}

TEST(OverlapInterrupted, BeforeTheFirstSizeKeepsNothing) {
  const auto sizes = measure::OverlapOptions{}.sweep_sizes();
  EXPECT_FALSE(overlap_failing_at(fmt::format("overlap {} B", sizes[0])).has_value());
}

// Sends that complete on the receiver's acknowledgement from 257 B (Tm = TA, DCP), whose ack
// costs what a short message costs (the calibrated set's assumption): loggp reads the range
// eager (its late receive pays no hand-shake) whose sends wait for the late receiver, overlap
// sees them wait too; the two agree, the range is marked TA with DCP, and the calibrated set
// reproduces the curves and the virtual network's round trips.
TEST(ProfileRoundTrip, EagerSendsCompletedByTheReceiversAcknowledgement) {
  auto truth = commgauge::testing::acknowledged_link(model::Progress::dependent, 3.0);
  truth.ranges[1].control_send_us = truth.ranges[0].send_overhead_us;
  truth.ranges[1].control_recv_us = truth.ranges[0].recv_overhead_us;
  net::VirtualNetwork net(truth);
  measure::LoggpResult loggp;
  const measure::LoggpOptions lo;
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_loggp(t, lo, nullptr)) loggp = *r;
  });
  ASSERT_EQ(loggp.link.ranges.size(), 3u);
  EXPECT_EQ(loggp.link.ranges[1].from_bytes, 257u);
  EXPECT_FALSE(loggp.link.ranges[1].rendezvous);
  EXPECT_EQ(loggp.link.ranges[2].from_bytes, 12289u);
  // loggp alone: its probe's sends waited for the late receiver above 256 B (and below the
  // rendezvous switch), not at 256 B: that range is TA with DCP, and its calibrated set already
  // reproduces the curves.
  EXPECT_EQ(loggp.link.ranges[0].transfer, "");
  EXPECT_EQ(loggp.link.ranges[1].transfer, "TA");
  EXPECT_EQ(loggp.link.ranges[1].progress, model::Progress::dependent);
  EXPECT_LT(loggp.calibrated_check.max_abs_all, 0.02);
  measure::OverlapResult overlap;
  net.run([&](net::Transport& t) {
    if (auto r = measure::measure_overlap(t, {}, loggp.link, nullptr)) overlap = *r;
  });
  EXPECT_TRUE(overlap.agrees_with_loggp.value_or(false)) << overlap.resolution;
  ASSERT_EQ(overlap.ranges.size(), 3u);
  EXPECT_EQ(overlap.ranges[1].mechanism, model::TransferMechanism::TA);
  EXPECT_EQ(overlap.ranges[1].progress, model::Progress::dependent);
  EXPECT_TRUE(overlap.ranges[1].supported);
  measure::adopt_overlap(loggp, lo, overlap);
  const model::LinkParams& profiled = loggp.link;
  EXPECT_EQ(profiled.ranges[1].transfer, "TA");
  EXPECT_EQ(profiled.ranges[1].progress, model::Progress::dependent);
  EXPECT_EQ(profiled.ranges[0].transfer, "");
  EXPECT_LT(loggp.calibrated_check.max_abs_all, 0.02);
  const model::CostModel truth_cost(truth);
  for (const char* name : {"loggps", "loggpo"}) {
    const model::CommModel m = model::make_model(name, profiled);
    for (std::uint64_t k : {1u, 64u, 300u, 4096u, 12288u}) {
      const double want = model::to_microseconds(model::round_trip(truth_cost, k));
      EXPECT_NEAR(model::to_microseconds(m.round_trip(k)), want, 0.02 * want) << name << " " << k;
    }
  }
}

TEST(ProfileRoundTrip, DependentProgress) {
  round_trip_through_profile(model::Progress::dependent);
}
TEST(ProfileRoundTrip, IndependentProgress) {
  round_trip_through_profile(model::Progress::independent);
}
TEST(ProfileRoundTrip, ARequestCheaperThanAMessage) {
  round_trip_through_profile(model::Progress::dependent, 0.4);
}

}  // namespace
}  // namespace commgauge::profile

namespace commgauge::model {
namespace {

// The README's model table lists exactly the registry's models, in its order.
TEST(ModelRegistry, TheReadmeTableIsTheRegistry) {
  std::ifstream in(COMMGAUGE_SOURCE_DIR "/README.md");
  std::string line;
  bool in_section = false;
  std::vector<std::string> names;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Models";
    if (in_section && line.rfind("| `", 0) == 0)
      names.push_back(line.substr(3, line.find('`', 3) - 3));
  }
  std::vector<std::string> registry;
  for (const auto& m : model_infos())
    registry.push_back(m.name);
  EXPECT_EQ(names, registry);
  EXPECT_EQ(model_names(), "loggp, loggps or loggpo");
  // Every registered model makes a model of a link; an unknown name says which exist.
  const auto link = commgauge::testing::loggp_link();
  for (const auto& m : model_infos())
    EXPECT_EQ(make_model(m.name, link).name(), m.name);
  try {
    make_model("logp", link);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "unknown model \"logp\" (loggp, loggps or loggpo)");
  }
}

}  // namespace
}  // namespace commgauge::model
