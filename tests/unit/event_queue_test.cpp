// The simulator's event queue against a binary heap on (time, seq): the same order for monotone
// sequences of pushes and pops, with many ties (every rank at one time) and wide time ranges.
#include <cstdint>
#include <queue>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "sim/event_queue.hpp"

namespace commgauge::sim {
namespace {

struct Event {
  std::int64_t time;
  std::uint64_t seq;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

// Pops and pushes like a replay: each pop may push events at its time (ties) or later.
void compare_with_binary_heap(std::uint32_t seed, std::int64_t max_delay, int tie_percent) {
  std::mt19937_64 random(seed);
  MonotoneEventQueue<Event> queue;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> reference;
  std::uint64_t seq = 0;
  auto push = [&](std::int64_t time) {
    queue.push({time, seq});
    reference.push({time, seq});
    ++seq;
  };
  for (int i = 0; i < 1000; ++i)
    push(static_cast<std::int64_t>(random() % 3));  // many ranks starting together
  std::size_t popped = 0;
  while (!reference.empty()) {
    ASSERT_EQ(queue.size(), reference.size());
    ASSERT_EQ(queue.min_time(), reference.top().time);
    const Event got = queue.pop();
    const Event want = reference.top();
    reference.pop();
    ASSERT_EQ(got.time, want.time) << "pop " << popped;
    ASSERT_EQ(got.seq, want.seq) << "pop " << popped;
    ++popped;
    if (seq < 200000) {
      const int children = static_cast<int>(random() % 3);
      for (int c = 0; c < children; ++c) {
        const bool tie = static_cast<int>(random() % 100) < tie_percent;
        push(got.time + (tie ? 0 : 1 + static_cast<std::int64_t>(random() % max_delay)));
      }
    }
  }
  EXPECT_TRUE(queue.empty());
  EXPECT_GT(popped, 1000u);
}

TEST(EventQueue, PopsInTimeThenSequenceOrderLikeABinaryHeap) {
  compare_with_binary_heap(1, 1000, 50);                   // half the events at the present
  compare_with_binary_heap(2, 1, 10);                      // times one apart
  compare_with_binary_heap(3, std::int64_t{1} << 50, 20);  // picoseconds over hours
  compare_with_binary_heap(4, 7, 90);                      // nearly all ties
}

TEST(EventQueue, RefusesAnEventBeforeTheLastPopped) {
  MonotoneEventQueue<Event> queue;
  queue.push({10, 0});
  queue.push({20, 1});
  EXPECT_EQ(queue.pop().seq, 0u);
  EXPECT_THROW(queue.push({9, 2}), std::logic_error);
  queue.push({10, 3});  // at the present, later in sequence: fine
  EXPECT_EQ(queue.pop().seq, 3u);
  EXPECT_EQ(queue.pop().seq, 1u);
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace commgauge::sim
