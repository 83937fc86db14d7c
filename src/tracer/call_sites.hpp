#pragma once
// Where the program called MPI from: a call's return address as (module, offset in the module's
// file), so that a reader can resolve it (addr2line) without the process's address space. A
// module is numbered when a call site first lies in it (the recorder then writes a `module`
// record), so a trace names only the objects that called MPI.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace commgauge::tracer {

class CallSites {
 public:
  struct Site {
    std::uint32_t module = 0;  ///< from 1; 0: outside every loaded object (absolute address)
    std::uint64_t offset = 0;
    bool new_module = false;  ///< the first site in this module: describe it (module_json)
  };

  /// Reads the loaded objects' executable segments (dl_iterate_phdr).
  void load();
  /// The call instruction before `return_address`. An address outside the objects known makes
  /// it read the loaded objects again if any was loaded since (dlopen).
  /// `number`: give the object a module number if it has none (else its site is module 0).
  /// Inline for the usual case, a call from the numbered object the last call came from.
  Site locate(const void* return_address, bool number = true) {
    // The byte before the return address is inside the call instruction (addr2line then names
    // the call's line, not the next one).
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(return_address) - 1;
    if (last_ < segments_.size()) {
      const Segment& s = segments_[last_];
      if (s.begin <= a && a < s.end && objects_[s.object].module != 0)
        return {objects_[s.object].module, a - s.bias, false};
    }
    return locate_slowly(a, number);
  }
  /// {"module", "path", "base"} of a numbered module.
  nlohmann::json module_json(std::uint32_t module) const;

 private:
  struct Segment {
    std::uintptr_t begin = 0, end = 0;  ///< runtime addresses [begin, end)
    std::uintptr_t bias = 0;            ///< runtime address minus file address
    std::uint32_t object = 0;           ///< index in objects_
  };
  struct Object {
    std::string path;
    std::uintptr_t bias = 0;
    std::uint32_t module = 0;  ///< 0 until a site lies in it
  };
  Site found(const Segment& s, std::uintptr_t address, bool number);
  Site locate_slowly(std::uintptr_t address, bool number);

  std::vector<Segment> segments_;  ///< sorted by begin
  std::vector<Object> objects_;
  std::vector<std::uint32_t> module_objects_;  ///< module n is objects_[module_objects_[n - 1]]
  unsigned long long loads_ = 0;               ///< glibc's count of objects loaded, at load()
  std::size_t last_ = 0;  ///< the segment found last (calls come from a few places in loops)
};

}  // namespace commgauge::tracer
