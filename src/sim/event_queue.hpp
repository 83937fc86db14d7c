#pragma once
// The simulator's event queue: a radix heap on the 128-bit key (time, seq).
//
// A discrete-event simulation only ever inserts events at or after the one being processed,
// and seq grows with every insertion, so keys are unique and every key pushed is larger than the
// last key popped: the queue is monotone, which is what a radix heap needs. Events sit in
// buckets by the highest bit in which their key differs from the last popped key; a pop
// empties the lowest non-empty bucket into lower ones, so each event moves O(log key range)
// times at most and a push is an append. Against std::priority_queue (a binary heap of
// 24-byte events, pointer-chasing log2(n) levels on every pop) this keeps the hot path to
// sequential appends and scans (benchmarks/sim_benchmark.cpp compares the two).
//
// Order is exactly (time, seq) ascending, the same as the binary heap it replaces, so the
// replay's results do not depend on which queue runs it.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace commgauge::sim {

/// `Event` has `std::int64_t time` (>= 0) and `std::uint64_t seq`.
template <class Event>
class MonotoneEventQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Event& e) {
    const auto time = static_cast<std::uint64_t>(e.time);
    if (time < last_time_ || (time == last_time_ && e.seq < last_seq_))
      throw std::logic_error("event queue: an event before the last one popped");
    put(e, time);
    ++size_;
  }

  /// The earliest time queued (the queue must not be empty). Exact without reordering anything:
  /// every key in a lower bucket is below every key in a higher one, and each bucket keeps its
  /// smallest time.
  std::int64_t min_time() const { return static_cast<std::int64_t>(min_time_[lowest()]); }

  /// Removes and returns the smallest (time, seq); the queue must not be empty.
  Event pop() {
    const std::size_t i = lowest();
    if (i != 0) refill(i);
    std::vector<Event>& zero = buckets_[0];
    const Event e = zero.back();
    zero.pop_back();
    if (zero.empty()) occupied_[0] &= ~std::uint64_t{1};
    --size_;
    return e;
  }

 private:
  // 0: equal to the last popped key; 1 + b: the highest bit in which the key differs from it
  // is b (seq: bits 0-63, time: bits 64-127). Keys only differ upwards (they are larger).
  std::size_t bucket_of(std::uint64_t time, std::uint64_t seq) const {
    if (const std::uint64_t t = time ^ last_time_; t != 0)
      return 65 + static_cast<std::size_t>(63 - std::countl_zero(t));
    if (const std::uint64_t s = seq ^ last_seq_; s != 0)
      return 1 + static_cast<std::size_t>(63 - std::countl_zero(s));
    return 0;
  }

  void put(const Event& e, std::uint64_t time) {
    const std::size_t b = bucket_of(time, e.seq);
    std::vector<Event>& bucket = buckets_[b];
    if (bucket.empty()) {
      occupied_[b / 64] |= std::uint64_t{1} << (b % 64);
      min_time_[b] = time;
    } else if (time < min_time_[b]) {
      min_time_[b] = time;
    }
    bucket.push_back(e);
  }

  std::size_t lowest() const {
    for (std::size_t w = 0; w < occupied_.size(); ++w)
      if (occupied_[w] != 0)
        return w * 64 + static_cast<std::size_t>(std::countr_zero(occupied_[w]));
    throw std::logic_error("event queue: empty");
  }

  // Moves bucket i's events down, relative to its smallest key, which becomes the last key.
  void refill(std::size_t i) {
    std::vector<Event> from;
    from.swap(buckets_[i]);
    occupied_[i / 64] &= ~(std::uint64_t{1} << (i % 64));
    std::size_t min = 0;
    for (std::size_t k = 1; k < from.size(); ++k)
      if (from[k].time < from[min].time ||
          (from[k].time == from[min].time && from[k].seq < from[min].seq))
        min = k;
    last_time_ = static_cast<std::uint64_t>(from[min].time);
    last_seq_ = from[min].seq;
    for (const Event& e : from)
      put(e, static_cast<std::uint64_t>(e.time));
    from.clear();
    buckets_[i].swap(from);  // keep the capacity for the next time the bucket fills
  }

  std::array<std::vector<Event>, 129> buckets_;
  std::array<std::uint64_t, 129> min_time_{};
  std::array<std::uint64_t, 3> occupied_{};
  std::uint64_t last_time_ = 0;
  std::uint64_t last_seq_ = 0;
  std::size_t size_ = 0;
};

}  // namespace commgauge::sim
