#pragma once
// Message buffers that start on a page boundary, as OSU's benchmarks allocate them.
//
// Why: over Open MPI's shared memory (vader, single copy by CMA) the copy's speed depends on where
// the receive buffer lies against the send buffer within a 4 KiB page. Measured here (plain C,
// 2 ranks, 2026-11-29, quiet): a 64 KiB one-way time of 47.9-49.0 us with the receive buffer 16 B
// past the send buffer's page offset against 10.2-10.7 us with both page-aligned (8 KiB:
// 8.4-9.3 against 3.3-3.5 us; a 64 KiB Alltoall 80-98 against 14-16 us; offsets 1-24 B all slow,
// 48 B and more, or negative, fast): the loads of the copy alias the stores just ahead of them
// (4K aliasing). With buffers from the heap the offsets, and so loggp's G and the held-out cells,
// depended on the allocation history of the run.

#include <vector>

#include <boost/align/aligned_allocator.hpp>

namespace commgauge::net {

inline constexpr std::size_t kPageBytes = 4096;

using PageAlignedBytes =
    std::vector<unsigned char, boost::alignment::aligned_allocator<unsigned char, kPageBytes>>;

}  // namespace commgauge::net
