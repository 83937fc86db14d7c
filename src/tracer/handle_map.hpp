#pragma once
// An open-addressing hash map keyed by MPI handles (pointers in Open MPI, integers in MPICH):
// no allocation per insert, so recording an Isend does not call malloc.

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace commgauge::tracer {

template <typename V>
class HandleMap {
 public:
  template <typename H>
  static std::uint64_t key(H handle) {
    static_assert(sizeof(H) <= sizeof(std::uint64_t));
    std::uint64_t k = 0;
    std::memcpy(&k, &handle, sizeof handle);
    return k;
  }

  HandleMap() { slots_.resize(64); }

  V* find(std::uint64_t k) {
    for (std::size_t i = hash(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.state == kEmpty) return nullptr;
      if (s.state == kFull && s.key == k) return &s.value;
    }
  }

  /// The value for `k`, created (value-initialised) if absent.
  V& insert(std::uint64_t k) {
    if (V* v = find(k)) return *v;
    if (2 * (used_ + 1) > slots_.size()) grow();
    for (std::size_t i = hash(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.state != kFull) {
        if (s.state == kEmpty) ++used_;
        s.state = kFull;
        s.key = k;
        s.value = V{};
        ++size_;
        return s.value;
      }
    }
  }

  bool erase(std::uint64_t k) {
    for (std::size_t i = hash(k);; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.state == kEmpty) return false;
      if (s.state == kFull && s.key == k) {
        s.state = kTombstone;
        s.value = V{};
        --size_;
        return true;
      }
    }
  }

  std::size_t size() const { return size_; }

  template <typename F>
  void for_each(F&& f) {
    for (Slot& s : slots_)
      if (s.state == kFull) f(s.key, s.value);
  }

 private:
  static constexpr std::uint8_t kEmpty = 0, kFull = 1, kTombstone = 2;
  struct Slot {
    std::uint64_t key = 0;
    std::uint8_t state = kEmpty;
    V value{};
  };

  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t hash(std::uint64_t k) const {
    k ^= k >> 33;  // the mixer of MurmurHash3's fmix64
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k) & mask();
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    // Grow only when live entries need it; otherwise rehash to clear tombstones.
    slots_ = std::vector<Slot>(4 * size_ + 2 > old.size() ? 2 * old.size() : old.size());
    used_ = 0;
    size_ = 0;
    for (Slot& s : old)
      if (s.state == kFull) insert(s.key) = std::move(s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t used_ = 0;  ///< full + tombstones
};

}  // namespace commgauge::tracer
