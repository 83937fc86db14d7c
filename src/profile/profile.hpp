#pragma once
// The machine profile (schemas/profile.v1.schema.json): per link class (intra_node,
// inter_node) the link parameters, where they came from, and optionally the overlap (LogGPO)
// and latency results. Models, prediction and simulation consume it; a user may write one by
// hand for a machine they do not have.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/link_params.hpp"
#include "profile/json_schema.hpp"

namespace commgauge::profile {

const JsonSchema& profile_schema();
const std::string& profile_schema_text();

/// Which of a measured link's parameter sets a consumer reads: the calibrated set (fitted to all
/// of loggp's curves; the default) or the seeds' estimators (seed 000 eqs. (6), (7), §3.4).
enum class ParameterSet { calibrated, seeds };
/// "calibrated" or "seeds"; throws InputError naming `option`.
ParameterSet parameter_set_from_string(const std::string& text, const std::string& option);

struct LinkClass {
  model::LinkParams link;                      ///< the calibrated set (or a hand-written link)
  std::optional<model::LinkParams> seed_link;  ///< the seeds' estimators, when measured
  nlohmann::json source;        ///< {kind, method, transport, hosts, link, date_utc, ...}
  nlohmann::json overlap;       ///< null or the overlap section
  nlohmann::json latency;       ///< null or the latency section
  nlohmann::json heldout;       ///< null or the held-out validation (measured against predicted)
  nlohmann::json loggp;         ///< null or how loggp read the switches: switches, notes, rounds
  nlohmann::json latency_mode;  ///< null or how the phases kept to loggp's latency mode
  /// Why the measured class is not trusted (loggp.trust.reasons); empty when it is, or when the
  /// class says nothing (written by hand or by an older commgauge).
  std::vector<std::string> distrust;
};

struct Profile {
  std::string description;
  std::map<std::string, LinkClass> classes;  ///< "intra_node", "inter_node"
  /// L < 0 anywhere (allowed, flagged): one message per class.
  std::vector<std::string> flags;
};

/// Validates against the profile schema and each link against the link-parameter schema, and
/// checks what a schema cannot: an inter_node class that was measured must come from a real
/// network link (source.link "network" or "namespaces"), never from two local processes.
/// Errors name the file and the field.
Profile profile_from_json(const nlohmann::json& document, const std::string& where);
Profile read_profile(const std::filesystem::path& path);
nlohmann::json profile_to_json(const Profile& p);

struct LinkForPrediction {
  model::LinkParams link;
  std::string link_class;  ///< the class taken from a profile; "" for a single link document
  /// The smallest and largest size the link was measured at, when known.
  std::optional<std::pair<std::uint64_t, std::uint64_t>> measured_bytes;
  std::vector<std::string> distrust;  ///< the class's, as LinkClass::distrust
  nlohmann::json latency_mode;        ///< the class's LinkClass::latency_mode; null for a link file
};

/// The link of `path`, which is either a profile (the class `link_class`, or intra_node, or the
/// only class) or a single link-parameter document (loggp --json), in the parameter set asked
/// for (InputError if the file holds no seeds' estimators).
LinkForPrediction read_link_for_prediction(const std::filesystem::path& path,
                                           const std::string& link_class,
                                           ParameterSet set = ParameterSet::calibrated);

/// The measured classes of `document` (a profile; nothing for a single link document) that are
/// not trusted, each with its reasons.
std::map<std::string, std::vector<std::string>> untrusted_classes(const nlohmann::json& document,
                                                                  const std::string& where);

/// The largest size each measured class of `document` (a profile; nothing for a single link
/// document) was measured at (source.measured_max_bytes), where recorded.
std::map<std::string, std::uint64_t> measured_max_bytes(const nlohmann::json& document,
                                                        const std::string& where);

/// Every link class of `document` (a profile, or a single link document under both class names
/// `single_as`), in the parameter set asked for; `where` names the file in errors.
std::map<std::string, model::LinkParams> links_of_document(
    const nlohmann::json& document, const std::string& where,
    const std::vector<std::string>& single_as, ParameterSet set);

}  // namespace commgauge::profile
