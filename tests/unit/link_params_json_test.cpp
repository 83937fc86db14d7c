// The link-parameter document: the schema file of the repository is the specification, every
// reader validates against it, and errors name the field.

#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "model/cost.hpp"
#include "profile/json_file.hpp"
#include "profile/link_params_json.hpp"

namespace commgauge::profile {
namespace {

using ::testing::HasSubstr;

nlohmann::json valid_document() {
  return nlohmann::json::parse(R"({
    "format": "commgauge-link-params", "version": 1, "L_us": 3.0,
    "ranges": [
      {"from_bytes": 1, "o_s_us": 1.0, "o_r_us": 1.4, "g_us": 2.0, "G_us_per_byte": 0.0008},
      {"from_bytes": 12289, "to_bytes": 1048576, "o_s_us": 2.5, "o_r_us": 2.0, "g_us": 6.0,
       "G_us_per_byte": 0.0005, "rendezvous": true, "progress": "dependent",
       "O_s_us_per_byte": 0.0001}
    ]})");
}

std::string error_of(const nlohmann::json& doc) {
  try {
    link_params_from_json(doc, "net.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LinkParamsJson, ReadsAValidDocument) {
  const model::LinkParams link = link_params_from_json(valid_document(), "net.json");
  EXPECT_DOUBLE_EQ(link.latency_us, 3.0);
  ASSERT_EQ(link.ranges.size(), 2u);
  EXPECT_DOUBLE_EQ(link.ranges[0].recv_overhead_us, 1.4);
  EXPECT_DOUBLE_EQ(link.ranges[0].send_overhead_per_byte_us, 0.0);  // default
  EXPECT_TRUE(link.ranges[1].rendezvous);
  EXPECT_EQ(link.ranges[1].progress, model::Progress::dependent);
  EXPECT_DOUBLE_EQ(link.ranges[1].send_overhead_per_byte_us, 0.0001);
}

TEST(LinkParamsJson, RoundTrips) {
  const model::LinkParams link = link_params_from_json(valid_document(), "net.json");
  const model::LinkParams again = link_params_from_json(link_params_to_json(link), "again");
  EXPECT_EQ(link_params_to_json(again), link_params_to_json(link));
}

TEST(LinkParamsJson, MissingFieldIsNamed) {
  auto doc = valid_document();
  doc["ranges"][1].erase("g_us");
  EXPECT_THAT(error_of(doc), HasSubstr("net.json: /ranges/1/g_us: required field is missing"));
}

TEST(LinkParamsJson, WrongVersionIsNamed) {
  auto doc = valid_document();
  doc["version"] = 2;
  EXPECT_THAT(error_of(doc), HasSubstr("/version: expected 1"));
}

TEST(LinkParamsJson, NegativeOverheadIsRejected) {
  auto doc = valid_document();
  doc["ranges"][0]["o_s_us"] = -1;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/o_s_us: must be >= 0"));
}

// o_u (a receive posted after its eager data arrived) is read, written back, defaults to 0, and
// a negative value is refused by name; the cost model carries it in every range (a rendezvous
// range's is what answering a request that came before its receive costs more).
TEST(LinkParamsJson, UnexpectedReceiveOverheadRoundTripsAndIsChecked) {
  auto doc = valid_document();
  EXPECT_EQ(link_params_from_json(doc, "net.json").ranges[0].unexpected_recv_us, 0.0);
  doc["ranges"][0]["o_u_us"] = 0.25;
  doc["ranges"][1]["o_u_us"] = 0.5;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.ranges[0].unexpected_recv_us, 0.25);
  EXPECT_DOUBLE_EQ(link_params_to_json(link)["ranges"][0]["o_u_us"].get<double>(), 0.25);
  const model::CostModel cost(link);
  EXPECT_EQ(cost.message(100).unexpected_recv, model::to_picoseconds(0.25));
  EXPECT_EQ(cost.message(20000).unexpected_recv, model::to_picoseconds(0.5));  // rendezvous
  doc["ranges"][0]["o_u_us"] = -0.1;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/o_u_us"));
}

// o_x (a receive whose message crossed one its receiver sent) likewise, on every range.
TEST(LinkParamsJson, CrossingReceiveOverheadRoundTripsAndIsChecked) {
  auto doc = valid_document();
  EXPECT_EQ(link_params_from_json(doc, "net.json").ranges[0].crossing_recv_us, 0.0);
  EXPECT_FALSE(
      link_params_to_json(link_params_from_json(doc, "net.json"))["ranges"][0].contains("o_x_us"));
  doc["ranges"][0]["o_x_us"] = 0.125;
  doc["ranges"][1]["o_x_us"] = 0.75;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.ranges[1].crossing_recv_us, 0.75);
  EXPECT_DOUBLE_EQ(link_params_to_json(link)["ranges"][0]["o_x_us"].get<double>(), 0.125);
  const model::CostModel cost(link);
  EXPECT_EQ(cost.message(100).crossing_recv, model::to_picoseconds(0.125));
  EXPECT_EQ(cost.message(20000).crossing_recv, model::to_picoseconds(0.75));
  doc["ranges"][1]["o_x_us"] = -0.1;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/1/o_x_us"));
}

// Billing by pages: absent reads as 0 (by the byte) and is not written; a power of two
// round-trips and is charged; anything else is named.
TEST(LinkParamsJson, PageBillingRoundTripsAndIsChecked) {
  auto doc = valid_document();
  EXPECT_EQ(link_params_from_json(doc, "net.json").ranges[1].page_bytes, 0u);
  EXPECT_FALSE(link_params_to_json(link_params_from_json(doc, "net.json"))["ranges"][1].contains(
      "page_bytes"));
  doc["ranges"][1]["page_bytes"] = 4096;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_EQ(link.ranges[1].page_bytes, 4096u);
  EXPECT_EQ(link_params_to_json(link)["ranges"][1]["page_bytes"].get<std::uint64_t>(), 4096u);
  // 12289 B is billed as 16384 B: 2.5 us + 16384 x 0.0001 us.
  EXPECT_EQ(model::CostModel(link).message(12289).send_overhead, model::to_picoseconds(4.1384));
  doc["ranges"][1]["page_bytes"] = 3000;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/1/page_bytes"));
  doc["ranges"][1]["page_bytes"] = -1;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/1/page_bytes"));
}

// O_x, the crossing's part per byte: absent reads as 0 and is not written; a crossing costs
// o_x + k O_x, k the message's bytes, on the fast path and on the 128-bit one; checked.
TEST(LinkParamsJson, CrossingPerByteRoundTripsAndIsCharged) {
  auto doc = valid_document();
  EXPECT_EQ(link_params_from_json(doc, "net.json").ranges[1].crossing_recv_per_byte_us, 0.0);
  EXPECT_FALSE(link_params_to_json(link_params_from_json(doc, "net.json"))["ranges"][1].contains(
      "O_x_us_per_byte"));
  doc["ranges"][1]["o_x_us"] = 0.75;
  doc["ranges"][1]["O_x_us_per_byte"] = 0.002;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.ranges[1].crossing_recv_per_byte_us, 0.002);
  EXPECT_DOUBLE_EQ(link_params_to_json(link)["ranges"][1]["O_x_us_per_byte"].get<double>(), 0.002);
  const model::CostModel cost(link);
  // 0.75 + 20000 x 0.002 = 40.75 us; the eager range has none.
  EXPECT_EQ(cost.message(20000).crossing_recv, model::to_picoseconds(40.75));
  EXPECT_EQ(cost.message(100).crossing_recv, model::Picoseconds{0});
  // 10^13 bytes: past the fast path's 63-bit products (2 * 10^6 fs a byte), on the 128-bit path.
  model::LinkParams one;
  one.ranges.resize(1);
  one.ranges[0].crossing_recv_us = 0.75;
  one.ranges[0].crossing_recv_per_byte_us = 0.002;
  const std::uint64_t huge = 10'000'000'000'000;
  EXPECT_EQ(model::CostModel(one).message(huge).crossing_recv,
            model::Picoseconds{750'000 + 20'000'000'000'000'000});
  doc["ranges"][1]["O_x_us_per_byte"] = -1e-6;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/1/O_x_us_per_byte"));
}

// A copy into a buffer a peer pulled: absent (not measured) reads as 0 and is not written; a
// value round-trips; a negative one is named by the schema's check.
TEST(LinkParamsJson, CopyIntoSentRoundTripsAndIsChecked) {
  auto doc = valid_document();
  EXPECT_EQ(link_params_from_json(doc, "net.json").copy_into_sent_us_per_byte, 0.0);
  EXPECT_FALSE(link_params_to_json(link_params_from_json(doc, "net.json"))
                   .contains("copy_into_sent_us_per_byte"));
  doc["copy_into_sent_us_per_byte"] = 0.00025;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.copy_into_sent_us_per_byte, 0.00025);
  EXPECT_DOUBLE_EQ(link_params_to_json(link)["copy_into_sent_us_per_byte"].get<double>(), 0.00025);
  doc["copy_into_sent_us_per_byte"] = -0.1;
  EXPECT_THAT(error_of(doc), HasSubstr("copy_into_sent_us_per_byte"));
}

// A copy between rendezvous exchanges: absent reads as 0 and is not written; a value round-trips;
// a negative one is named.
TEST(LinkParamsJson, CopyAfterRendezvousRoundTripsAndIsChecked) {
  auto doc = valid_document();
  const model::LinkParams absent = link_params_from_json(doc, "net.json");
  EXPECT_EQ(absent.copy_after_rendezvous_us_per_byte, 0.0);
  EXPECT_FALSE(link_params_to_json(absent).contains("copy_after_rendezvous_us_per_byte"));
  doc["copy_after_rendezvous_us_per_byte"] = 0.000014;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.copy_after_rendezvous_us_per_byte, 0.000014);
  EXPECT_DOUBLE_EQ(link_params_to_json(link)["copy_after_rendezvous_us_per_byte"].get<double>(),
                   0.000014);
  doc["copy_after_rendezvous_us_per_byte"] = -0.5;
  EXPECT_THAT(error_of(doc), HasSubstr("copy_after_rendezvous_us_per_byte"));
}

TEST(LinkParamsJson, CollectiveCallRoundTripsAndIsChecked) {
  auto doc = valid_document();
  EXPECT_EQ(link_params_from_json(doc, "net.json").collective_call_us, 0.0);
  EXPECT_FALSE(
      link_params_to_json(link_params_from_json(doc, "net.json")).contains("collective_call_us"));
  doc["collective_call_us"] = 0.042;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.collective_call_us, 0.042);
  EXPECT_DOUBLE_EQ(link_params_to_json(link)["collective_call_us"].get<double>(), 0.042);
  doc["collective_call_us"] = -0.1;
  EXPECT_THAT(error_of(doc), HasSubstr("collective_call_us"));
}

TEST(LinkParamsJson, SelfMessageCostsRoundTripAndAreChecked) {
  auto doc = valid_document();
  EXPECT_TRUE(link_params_from_json(doc, "net.json").self_message.empty());
  EXPECT_FALSE(
      link_params_to_json(link_params_from_json(doc, "net.json")).contains("self_message"));
  doc["self_message"] = {{{"bytes", 8}, {"us", 0.07}}, {{"bytes", 1024}, {"us", 0.12}}};
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_EQ(link.self_message, (std::vector<model::LinkParams::SizeCost>{{8, 0.07}, {1024, 0.12}}));
  EXPECT_EQ(link_params_to_json(link)["self_message"], doc["self_message"]);
  doc["self_message"] = {{{"bytes", 1024}, {"us", 0.12}}, {{"bytes", 8}, {"us", 0.07}}};
  EXPECT_THAT(error_of(doc),
              HasSubstr("/self_message/1: sizes must increase (8 B follows 1024 B)"));
  doc["self_message"] = {{{"bytes", 8}, {"us", -0.07}}};
  EXPECT_THAT(error_of(doc), HasSubstr("self_message"));
  doc["self_message"] = {{{"bytes", 8}}};
  EXPECT_THAT(error_of(doc), HasSubstr("self_message"));
  nlohmann::json many = nlohmann::json::array();
  for (int i = 0; i < 65; ++i)
    many.push_back({{"bytes", i}, {"us", 0.1}});
  doc["self_message"] = many;
  EXPECT_THAT(error_of(doc), HasSubstr("/self_message: at most 64 sizes, got 65"));
}

// Linear between the measured sizes, the first size's cost below it, the last two sizes' slope
// beyond (never below 0): hand-computed.
TEST(LinkParams, SelfMessageCostIsInterpolatedBetweenItsSizes) {
  model::LinkParams l;
  l.self_message = {{8, 0.07}, {1024, 0.12}, {16384, 0.22}, {65536, 0.70}};
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(0), 0.07);
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(8), 0.07);
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(516), 0.095);
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(1024), 0.12);
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(8704), 0.17);
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(65536), 0.70);
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(65536 + 49152), 1.18);
  l.self_message = {{8, 0.3}, {1024, 0.2}};  // falling: beyond the last size, never below 0
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(1 << 20), 0.0);
  l.self_message = {{1024, 0.2}};
  EXPECT_DOUBLE_EQ(l.self_message_cost_us(1 << 20), 0.2);
}

TEST(LinkParamsJson, FirstCallCostsRoundTripAndAreChecked) {
  auto doc = valid_document();
  EXPECT_TRUE(link_params_from_json(doc, "net.json").first_call_us.empty());
  EXPECT_FALSE(
      link_params_to_json(link_params_from_json(doc, "net.json")).contains("first_call_us"));
  doc["first_call_us"] = {{"MPI_Cart_create", 626.0}, {"MPI_Bcast", 42.5}};
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_EQ(link.first_call_us,
            (std::map<std::string, double>{{"MPI_Bcast", 42.5}, {"MPI_Cart_create", 626.0}}));
  EXPECT_EQ(link_params_to_json(link)["first_call_us"], doc["first_call_us"]);
  doc["first_call_us"] = {{"MPI_Bcast", -1.0}};
  EXPECT_THAT(error_of(doc), HasSubstr("first_call_us"));
  doc["first_call_us"] = {{"Bcast", 1.0}};
  EXPECT_THAT(error_of(doc), HasSubstr("/first_call_us/Bcast: expected an MPI function's name"));
  doc["first_call_us"] = {{"MPI_Bcast", "fast"}};
  EXPECT_THAT(error_of(doc), HasSubstr("first_call_us"));
  nlohmann::json many = nlohmann::json::object();
  for (int i = 0; i < 33; ++i)
    many[fmt::format("MPI_F{}", i)] = 1.0;
  doc["first_call_us"] = many;
  EXPECT_THAT(error_of(doc), HasSubstr("/first_call_us: at most 32 functions, got 33"));
}

TEST(LinkParamsJson, UnknownRangeFieldIsRejected) {
  auto doc = valid_document();
  doc["ranges"][0]["gap_us"] = 1;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/gap_us: unknown field"));
}

TEST(LinkParamsJson, WrongTypeIsNamed) {
  auto doc = valid_document();
  doc["ranges"][0]["rendezvous"] = "yes";
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/rendezvous: expected boolean"));
  doc = valid_document();
  doc["ranges"][0]["progress"] = "eventually";
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/progress: expected one of"));
}

TEST(LinkParamsJson, NegativeLatencyAllowedWhileOneWayIsPositive) {
  auto doc = valid_document();
  doc["L_us"] = -0.5;
  EXPECT_DOUBLE_EQ(link_params_from_json(doc, "net.json").latency_us, -0.5);
  doc["L_us"] = -2.5;  // o_s + L + o_r = 1.0 - 2.5 + 1.4 < 0
  EXPECT_THAT(error_of(doc), HasSubstr("one-way time o_s + L - omega + o_r must be positive"));
}

// The send overlap omega (seed 000 §3.4's overlap of o and L) is read, written, counted in the
// one-way time and never more than a send overhead (a message cannot precede its send).
TEST(LinkParamsJson, SendOverlapRoundTripsAndStaysWithinEverySendOverhead) {
  auto doc = valid_document();
  doc["L_us"] = 0;
  doc["send_overlap_us"] = 0.75;
  const model::LinkParams link = link_params_from_json(doc, "net.json");
  EXPECT_DOUBLE_EQ(link.send_overlap_us, 0.75);
  EXPECT_DOUBLE_EQ(link.effective_latency_us(), -0.75);
  EXPECT_EQ(link_params_to_json(link_params_from_json(link_params_to_json(link), "again")),
            link_params_to_json(link));
  EXPECT_EQ(model::CostModel(link).blocking_one_way(1).count(),
            model::to_picoseconds(1.0 - 0.75 + 1.4).count());
  doc["send_overlap_us"] = 1.5;  // above range 0's o_s = 1.0
  EXPECT_THAT(error_of(doc), HasSubstr("/send_overlap_us: 1.5 us exceeds the send overhead 1 us"));
  doc["send_overlap_us"] = -0.1;
  EXPECT_THAT(error_of(doc), HasSubstr("/send_overlap_us: must be >= 0"));
}

TEST(LinkParamsJson, RangesMustIncrease) {
  auto doc = valid_document();
  doc["ranges"][1]["from_bytes"] = 1;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/1/from_bytes: ranges must be in increasing order"));
}

TEST(LinkParamsJson, ToBytesMustMeetTheNextRange) {
  auto doc = valid_document();
  doc["ranges"][0]["to_bytes"] = 100;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/to_bytes: must be the next range's"));
}

TEST(LinkParamsJson, EmptyRangesRejected) {
  auto doc = valid_document();
  doc["ranges"] = nlohmann::json::array();
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges: expected at least 1 item"));
}

TEST(JsonFile, SyntaxErrorGivesLineAndColumn) {
  try {
    parse_json("{\n  \"a\": 1,\n  \"b\": ]\n}", "bad.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("bad.json:3:8"));
  }
}

// Found by the readers' fuzzer: a number past a double's range is an input error, not an
// escaped library exception.
TEST(JsonFile, NumberOutOfRangeIsAnInputError) {
  try {
    parse_json("{\"L_us\": 33e333}", "huge.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("huge.json"));
    EXPECT_THAT(e.what(), HasSubstr("number overflow"));
  }
}

// Found by the readers' fuzzer (UBSan): a whole number past every integer type, where the schema
// wants an integer, was cast to long long to test it. Now it is no integer (not exact in a
// double), refused with the field named; a float that is a small whole number still counts.
TEST(LinkParamsJson, HugeWholeNumberIsNoIntegerWithTheFieldNamed) {
  auto doc = valid_document();
  doc["ranges"][0]["from_bytes"] = 8.88888888888888888888888888881e29;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/from_bytes"));
  doc["ranges"][0]["from_bytes"] = 1.5;
  EXPECT_THAT(error_of(doc), HasSubstr("/ranges/0/from_bytes"));
  doc["ranges"][0]["from_bytes"] = 1.0;
  EXPECT_EQ(error_of(doc), "no error");
}

TEST(JsonSchema, RejectsUnsupportedKeywords) {
  EXPECT_THROW(JsonSchema(nlohmann::json{{"type", "object"}, {"oneOf", nlohmann::json::array()}}),
               std::invalid_argument);
}

// additionalProperties as a schema: every value of a map is checked against it (and the schema's
// own keywords are checked like any other's).
TEST(JsonSchema, AdditionalPropertiesAsASchemaChecksEveryValue) {
  const JsonSchema map(nlohmann::json{
      {"type", "object"}, {"additionalProperties", {{"type", "number"}, {"minimum", 0}}}});
  EXPECT_NO_THROW(map.validate(nlohmann::json{{"a", 1.5}, {"b", 0}}, "m.json"));
  try {
    map.validate(nlohmann::json{{"a", 1.5}, {"b", "x"}}, "m.json");
    ADD_FAILURE() << "a string was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/b"));
  }
  EXPECT_THROW(map.validate(nlohmann::json{{"a", -1}}, "m.json"), InputError);
  EXPECT_THROW(
      JsonSchema(nlohmann::json{{"type", "object"}, {"additionalProperties", {{"pattern", "x"}}}}),
      std::invalid_argument);
}

TEST(JsonSchema, EmbeddedSchemaMatchesTheRepositoryFile) {
  // The binary validates against the file in schemas/, compiled in at build time.
  const auto embedded = nlohmann::json::parse(link_params_schema_text());
  const auto file = read_json_file(COMMGAUGE_SOURCE_DIR "/schemas/link-params.v1.schema.json");
  EXPECT_EQ(embedded, file);
}

}  // namespace
}  // namespace commgauge::profile
