#include "profile/profile.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "profile/embedded_schemas.hpp"
#include "profile/json_file.hpp"
#include "profile/link_params_json.hpp"

namespace commgauge::profile {

const std::string& profile_schema_text() {
  static const std::string text = embedded::kProfileSchema;
  return text;
}

const JsonSchema& profile_schema() {
  static const JsonSchema schema(nlohmann::json::parse(profile_schema_text()));
  return schema;
}

Profile profile_from_json(const nlohmann::json& document, const std::string& where) {
  profile_schema().validate(document, where);
  Profile p;
  p.description = document.value("description", "");
  if (document["link_classes"].empty()) {
    throw InputError(where,
                     "/link_classes: at least one link class (intra_node or inter_node) is needed");
  }
  for (const auto& [name, cls] : document["link_classes"].items()) {
    const std::string at = fmt::format("{}: /link_classes/{}", where, name);
    LinkClass lc;
    lc.link = link_params_from_json(cls["link"], at + "/link");
    if (cls.contains("seed_link"))
      lc.seed_link = link_params_from_json(cls["seed_link"], at + "/seed_link");
    lc.source = cls["source"];
    lc.overlap = cls.value("overlap", nlohmann::json());
    lc.latency = cls.value("latency", nlohmann::json());
    lc.heldout = cls.value("heldout", nlohmann::json());
    lc.loggp = cls.value("loggp", nlohmann::json());
    lc.latency_mode = cls.value("latency_mode", nlohmann::json());
    if (lc.latency_mode.contains("band")) {  // the schema has checked the fields' types
      const auto& band = lc.latency_mode["band"];
      if (!(band["low_us"].get<double>() <= band["high_us"].get<double>()))
        throw InputError(at,
                         fmt::format("/latency_mode/band: low_us {} is above high_us {}",
                                     band["low_us"].get<double>(), band["high_us"].get<double>()));
    }
    if (lc.loggp.contains("trust") && !lc.loggp["trust"]["trusted"].get<bool>()) {
      lc.distrust = lc.loggp["trust"]["reasons"].get<std::vector<std::string>>();
      if (lc.distrust.empty()) lc.distrust.push_back("not trusted (no reason given)");
    }
    if (name == "inter_node" && lc.source["kind"] == "measured") {
      const std::string link = lc.source.value("link", "");
      if (link != "network" && link != "namespaces") {
        throw InputError(at, fmt::format("/source/link: a measured inter_node class must come from "
                                         "a real network link (\"network\" or \"namespaces\"), "
                                         "not \"{}\"",
                                         link.empty() ? "(missing)" : link));
      }
    }
    if (lc.link.latency_negative()) {
      p.flags.push_back(fmt::format("{}: L = {} us is negative (o and L overlap); allowed", name,
                                    lc.link.latency_us));
    }
    p.classes[name] = std::move(lc);
  }
  return p;
}

Profile read_profile(const std::filesystem::path& path) {
  return profile_from_json(read_json_file(path), path.string());
}

nlohmann::json profile_to_json(const Profile& p) {
  nlohmann::json classes = nlohmann::json::object();
  for (const auto& [name, lc] : p.classes) {
    nlohmann::json c = {{"link", link_params_to_json(lc.link)}, {"source", lc.source}};
    if (lc.seed_link) c["seed_link"] = link_params_to_json(*lc.seed_link);
    if (!lc.overlap.is_null()) c["overlap"] = lc.overlap;
    if (!lc.latency.is_null()) c["latency"] = lc.latency;
    if (!lc.heldout.is_null()) c["heldout"] = lc.heldout;
    if (!lc.loggp.is_null()) c["loggp"] = lc.loggp;
    if (!lc.latency_mode.is_null()) c["latency_mode"] = lc.latency_mode;
    classes[name] = c;
  }
  nlohmann::json doc = {{"format", "commgauge-profile"}, {"version", 1}, {"link_classes", classes}};
  if (!p.description.empty()) doc["description"] = p.description;
  return doc;
}

ParameterSet parameter_set_from_string(const std::string& text, const std::string& option) {
  if (text == "calibrated") return ParameterSet::calibrated;
  if (text == "seeds") return ParameterSet::seeds;
  throw InputError(option, fmt::format("expected calibrated or seeds, got \"{}\"", text));
}

namespace {

// A single link document's parameters in the set asked for: loggp --json keeps the seeds'
// estimators in its seed_estimators section.
model::LinkParams single_link(const nlohmann::json& doc, const std::string& where,
                              ParameterSet set) {
  // What predictions trust, as profile: never a link from an interrupted measurement.
  // (Types are the schema's to check, in link_params_from_json.)
  const auto complete = doc.find("complete");
  if (complete != doc.end() && complete->is_boolean() && !complete->get<bool>()) {
    const auto why = doc.find("interrupted");
    throw InputError(
        where, fmt::format("/complete: false: written by a loggp run that ended early "
                           "({}); its switches are unconfirmed: measure again",
                           why != doc.end() && why->is_string() ? why->get<std::string>()
                                                                : std::string("interrupted")));
  }
  if (set == ParameterSet::calibrated) return link_params_from_json(doc, where);
  if (!doc.contains("seed_estimators")) {
    throw InputError(where,
                     "/seed_estimators: this link holds no seeds' estimators (written by "
                     "hand, or by an older commgauge loggp); use the calibrated set");
  }
  return link_params_from_json(doc["seed_estimators"], where + ": /seed_estimators");
}

model::LinkParams class_link(const LinkClass& lc, const std::string& where, ParameterSet set) {
  if (set == ParameterSet::calibrated) return lc.link;
  if (!lc.seed_link) {
    throw InputError(where,
                     "/seed_link: this link class holds no seeds' estimators (written by "
                     "hand, or by an older commgauge profile); use the calibrated set");
  }
  return *lc.seed_link;
}

}  // namespace

std::map<std::string, std::vector<std::string>> untrusted_classes(const nlohmann::json& doc,
                                                                  const std::string& where) {
  std::map<std::string, std::vector<std::string>> out;
  if (!doc.is_object() || doc.value("format", "") != "commgauge-profile") return out;
  for (const auto& [name, cls] : profile_from_json(doc, where).classes)
    if (!cls.distrust.empty()) out[name] = cls.distrust;
  return out;
}

std::map<std::string, std::uint64_t> measured_max_bytes(const nlohmann::json& doc,
                                                        const std::string& where) {
  std::map<std::string, std::uint64_t> out;
  if (!doc.is_object() || doc.value("format", "") != "commgauge-profile") return out;
  for (const auto& [name, cls] : profile_from_json(doc, where).classes)
    if (cls.source.contains("measured_max_bytes"))
      out[name] = cls.source["measured_max_bytes"].get<std::uint64_t>();
  return out;
}

std::map<std::string, model::LinkParams> links_of_document(
    const nlohmann::json& doc, const std::string& where, const std::vector<std::string>& single_as,
    ParameterSet set) {
  const std::string format = doc.is_object() ? doc.value("format", "") : "";
  std::map<std::string, model::LinkParams> links;
  if (format == "commgauge-link-params") {
    const auto link = single_link(doc, where, set);
    for (const auto& name : single_as)
      links[name] = link;
    return links;
  }
  if (format != "commgauge-profile") {
    throw InputError(where, "/format: expected \"commgauge-profile\" or \"commgauge-link-params\"");
  }
  const Profile p = profile_from_json(doc, where);
  for (const auto& [name, cls] : p.classes)
    links[name] = class_link(cls, fmt::format("{}: /link_classes/{}", where, name), set);
  return links;
}

LinkForPrediction read_link_for_prediction(const std::filesystem::path& path,
                                           const std::string& link_class, ParameterSet set) {
  const nlohmann::json doc = read_json_file(path);
  const std::string format = doc.is_object() ? doc.value("format", "") : "";
  LinkForPrediction out;
  if (format == "commgauge-link-params") {
    if (!link_class.empty()) {
      throw InputError("link_class", fmt::format("{} is a single link, not a profile with link "
                                                 "classes",
                                                 path.string()));
    }
    out.link = single_link(doc, path.string(), set);
    if (doc.contains("points") && doc["points"].is_array() && !doc["points"].empty()) {
      std::uint64_t lo = UINT64_MAX, hi = 0;
      for (const auto& p : doc["points"]) {
        const auto b = p.value("size_bytes", std::uint64_t{0});
        lo = std::min(lo, b);
        hi = std::max(hi, b);
      }
      out.measured_bytes = std::make_pair(lo, hi);
    }
    return out;
  }
  if (format != "commgauge-profile") {
    throw InputError(path.string(),
                     "/format: expected \"commgauge-profile\" or "
                     "\"commgauge-link-params\"");
  }
  const Profile p = profile_from_json(doc, path.string());
  std::string name = link_class;
  if (name.empty())
    name = p.classes.contains("intra_node") ? "intra_node" : p.classes.begin()->first;
  const auto it = p.classes.find(name);
  if (it == p.classes.end()) {
    throw InputError("link_class", fmt::format("{} has no link class \"{}\"", path.string(), name));
  }
  out.link = class_link(it->second, fmt::format("{}: /link_classes/{}", path.string(), name), set);
  out.link_class = name;
  out.distrust = it->second.distrust;
  out.latency_mode = it->second.latency_mode;
  const auto& src = it->second.source;
  if (src.contains("measured_min_bytes") && src.contains("measured_max_bytes")) {
    out.measured_bytes = std::make_pair(src["measured_min_bytes"].get<std::uint64_t>(),
                                        src["measured_max_bytes"].get<std::uint64_t>());
    if (out.measured_bytes->first > out.measured_bytes->second)
      throw InputError(fmt::format("{}: /link_classes/{}/source", path.string(), name),
                       fmt::format("measured_min_bytes {} is above measured_max_bytes {}",
                                   out.measured_bytes->first, out.measured_bytes->second));
  }
  return out;
}

}  // namespace commgauge::profile
