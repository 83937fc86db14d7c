#include "tracer/call_sites.hpp"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace commgauge::tracer {

namespace {

std::string executable_path() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

unsigned long long objects_loaded() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;
      },
      &adds);
  return adds;
}

}  // namespace

void CallSites::load() {
  loads_ = objects_loaded();
  segments_.clear();
  last_ = 0;
  // Objects seen before keep their index (and module number); new ones are appended.
  struct Scan {
    CallSites* self;
    bool first = true;
  } scan{this};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* scan_pointer) {
        auto& s = *static_cast<Scan*>(scan_pointer);
        CallSites& self = *s.self;
        // The main program comes first, with an empty name.
        std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const bool program = s.first;
        s.first = false;
        if (path.empty()) {
          if (!program) return 0;  // an unnamed object that is not the program
          path = executable_path();
        }
        std::uint32_t object = 0;
        while (object < self.objects_.size() && !(self.objects_[object].path == path &&
                                                  self.objects_[object].bias == info->dlpi_addr))
          ++object;
        bool executable = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
          const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          self.segments_.push_back({begin, begin + ph.p_memsz, info->dlpi_addr, object});
          executable = true;
        }
        if (executable && object == self.objects_.size())
          self.objects_.push_back({path, info->dlpi_addr, 0});
        return 0;
      },
      &scan);
  std::sort(segments_.begin(), segments_.end(),
            [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
}

CallSites::Site CallSites::found(const Segment& s, std::uintptr_t address, bool number) {
  Object& o = objects_[s.object];
  Site site{o.module, address - s.bias, false};
  if (o.module == 0 && number) {
    module_objects_.push_back(s.object);
    o.module = site.module = static_cast<std::uint32_t>(module_objects_.size());
    site.new_module = true;
  }
  return site;
}

CallSites::Site CallSites::locate_slowly(std::uintptr_t a, bool number) {
  if (last_ < segments_.size() && segments_[last_].begin <= a && a < segments_[last_].end)
    return found(segments_[last_], a, number);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto it = std::upper_bound(segments_.begin(), segments_.end(), a,
                               [](std::uintptr_t x, const Segment& s) { return x < s.begin; });
    if (it != segments_.begin() && a < std::prev(it)->end) {
      last_ = static_cast<std::size_t>(std::prev(it) - segments_.begin());
      return found(segments_[last_], a, number);
    }
    if (attempt == 0 && objects_loaded() != loads_)
      load();  // an object loaded since (dlopen): read the list again
    else
      break;
  }
  return {0, a, false};
}

nlohmann::json CallSites::module_json(std::uint32_t module) const {
  const Object& o = objects_[module_objects_[module - 1]];
  return {{"module", module}, {"path", o.path}, {"base", o.bias}};
}

}  // namespace commgauge::tracer
