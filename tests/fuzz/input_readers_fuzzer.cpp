// libFuzzer target for the readers of user input other than traces, one reader per run (the
// environment variable COMMGAUGE_FUZZ_READER names it, so each reader is its own target with its
// own seeds): any bytes must be read or refused with an InputError (which names the file and the
// field or line), never a crash, a hang or another exception.
//   profile      a profile or link-params document (JSON + schema + what a schema cannot say),
//                through links_of_document as simulate and predict read it, both parameter sets
//   link-params  a single link (link_params_from_json, model::validate)
//   cluster      a cluster file, then every placement spec on it (place_ranks)
//   scheme       a sharing scheme (seed 003's text format)
//   sizes        a byte size and a size list (the CLI's and the schemes' size syntax)
// Built with clang (-fsanitize=fuzzer,address,undefined) by tests/fuzz/CMakeLists.txt.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/units.hpp"
#include "model/link_params.hpp"
#include "model/scheme.hpp"
#include "profile/json_file.hpp"
#include "profile/link_params_json.hpp"
#include "profile/profile.hpp"
#include "sim/cluster.hpp"

using namespace commgauge;

namespace {

enum class Reader { profile, link_params, cluster, scheme, sizes };

Reader reader() {
  static const Reader r = [] {
    const char* name = std::getenv("COMMGAUGE_FUZZ_READER");
    const std::string_view n = name ? name : "";
    if (n == "profile") return Reader::profile;
    if (n == "link-params") return Reader::link_params;
    if (n == "cluster") return Reader::cluster;
    if (n == "scheme") return Reader::scheme;
    if (n == "sizes") return Reader::sizes;
    std::fprintf(stderr,
                 "set COMMGAUGE_FUZZ_READER to profile, link-params, cluster, scheme or sizes\n");
    std::abort();
  }();
  return r;
}

void read_profile(const std::string& text) {
  const nlohmann::json doc = profile::parse_json(text, "fuzz.json");
  for (const auto set : {profile::ParameterSet::calibrated, profile::ParameterSet::seeds}) {
    try {
      for (const auto& [name, link] :
           profile::links_of_document(doc, "fuzz.json", {"intra_node", "inter_node"}, set)) {
        model::validate(link, name);
      }
    } catch (const InputError&) {
    }
  }
}

void read_cluster(const std::string& text) {
  const nlohmann::json doc = profile::parse_json(text, "cluster.json");
  const sim::Cluster cluster = sim::cluster_from_json(doc, "cluster.json");
  for (const char* spec : {"rrn", "rrp", "random:7"}) {
    for (std::uint32_t ranks : {1u, 7u, 64u}) {
      try {
        (void)sim::place_ranks(spec, ranks, cluster, {});
      } catch (const InputError&) {
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    switch (reader()) {
      case Reader::profile:
        read_profile(text);
        break;
      case Reader::link_params: {
        const auto link =
            profile::link_params_from_json(profile::parse_json(text, "link.json"), "link.json");
        model::validate(link, "link.json");
        break;
      }
      case Reader::cluster:
        read_cluster(text);
        break;
      case Reader::scheme:
        (void)model::parse_scheme(text, "fuzz.sch");
        break;
      case Reader::sizes:
        try {
          (void)parse_byte_size(text, "size");
        } catch (const InputError&) {
        }
        (void)parse_size_list(text, "sizes");
        break;
    }
  } catch (const InputError&) {
  }
  return 0;
}
