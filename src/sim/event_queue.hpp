#pragma once
// The simulator's event queue: a radix heap on time, with ties in sequence order.
//
// A discrete-event simulation only ever inserts events at or after the one being processed,
// and seq grows with every insertion, so keys (time, seq) are unique and every key pushed is
// larger than the last key popped: the queue is monotone, which is what a radix heap needs.
// Events later than the last popped time sit in buckets by the highest bit in which their time
// differs from it; a pop that finds no event at the current time empties the lowest non-empty
// bucket into lower ones, so each event moves O(log time range) times at most and a push is an
// append. Events at the current time wait in a FIFO. Every bucket, and the FIFO, is in seq
// order: pushes append ever larger seqs, and a refill empties the lowest non-empty bucket, in
// its order, into buckets that were all empty (a refill only ever takes the lowest).
// Against std::priority_queue (a binary heap of 24-byte events, pointer-chasing log2(n) levels
// on every pop) this keeps the hot path to sequential appends and scans
// (benchmarks/sim_benchmark.cpp compares the two); against a radix heap on the 128-bit
// (time, seq), ties (every rank at one time) cost no seq-bit rounds.
//
// Order is exactly (time, seq) ascending, the same as the binary heap it replaces, so the
// replay's results do not depend on which queue runs it.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/picoseconds.hpp"

namespace commgauge::sim {

/// The queue's key of a time (>= 0): its count as unsigned.
inline std::uint64_t time_key(std::int64_t t) {
  return static_cast<std::uint64_t>(t);
}
inline std::uint64_t time_key(model::Picoseconds t) {
  return static_cast<std::uint64_t>(t.count());
}

/// Event: a type with a `time` (std::int64_t or model::Picoseconds, >= 0) and `std::uint64_t
/// seq`.
template <class Event>
class MonotoneEventQueue {
 public:
  using Time = decltype(Event::time);

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push(const Event& e) {
    const std::uint64_t time = time_key(e.time);
    if (time < last_time_ || (time == last_time_ && e.seq < last_seq_))
      throw std::logic_error("event queue: an event before the last one popped");
    put(e, time);
    ++size_;
  }

  /// The earliest time queued (the queue must not be empty). Exact without reordering anything:
  /// every time in a lower bucket is below every time in a higher one, and each bucket keeps its
  /// smallest time.
  Time min_time() const {
    if (head_ < now_.size()) return Time{static_cast<std::int64_t>(last_time_)};
    return Time{static_cast<std::int64_t>(min_time_[lowest()])};
  }

  /// Removes and returns the smallest (time, seq); the queue must not be empty.
  Event pop() {
    if (head_ == now_.size()) refill(lowest());
    const Event e = now_[head_++];
    if (head_ == now_.size()) {
      now_.clear();
      head_ = 0;
    }
    last_seq_ = e.seq;
    --size_;
    return e;
  }

 private:
  // The current time's FIFO, or bucket b: the highest bit in which the time differs from the
  // last popped time is b (times only differ upwards: they are larger).
  void put(const Event& e, std::uint64_t time) {
    if (time == last_time_) {
      now_.push_back(e);
      return;
    }
    const auto b = static_cast<std::size_t>(63 - std::countl_zero(time ^ last_time_));
    std::vector<Event>& bucket = buckets_[b];
    if (bucket.empty()) {
      occupied_ |= std::uint64_t{1} << b;
      min_time_[b] = time;
    } else if (time < min_time_[b]) {
      min_time_[b] = time;
    }
    bucket.push_back(e);
  }

  std::size_t lowest() const {
    if (occupied_ == 0) throw std::logic_error("event queue: empty");
    return static_cast<std::size_t>(std::countr_zero(occupied_));
  }

  // Moves bucket i's events down, relative to its smallest time, which becomes the current one.
  void refill(std::size_t i) {
    std::vector<Event> from;
    from.swap(buckets_[i]);
    occupied_ &= ~(std::uint64_t{1} << i);
    last_time_ = min_time_[i];
    for (const Event& e : from)
      put(e, time_key(e.time));
    from.clear();
    buckets_[i].swap(from);  // keep the capacity for the next time the bucket fills
  }

  std::vector<Event> now_;  ///< events at last_time_, in seq order, from head_
  std::size_t head_ = 0;
  std::array<std::vector<Event>, 64> buckets_;
  std::array<std::uint64_t, 64> min_time_{};
  std::uint64_t occupied_ = 0;
  std::uint64_t last_time_ = 0;
  std::uint64_t last_seq_ = 0;
  std::size_t size_ = 0;
};

}  // namespace commgauge::sim
