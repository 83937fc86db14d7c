#pragma once

#include <cstdint>
#include <span>

#include "trace/writer.hpp"

namespace commgauge::bench {

/// A trace sink that only counts bytes: the benchmarks time encoding, not the disk.
class NullSink : public trace::BlockSink {
 public:
  void write_block(std::uint32_t, std::span<const unsigned char> block) override {
    bytes += block.size();
  }
  std::uint64_t bytes = 0;
};

}  // namespace commgauge::bench
