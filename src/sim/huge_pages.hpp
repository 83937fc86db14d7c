#pragma once
// An allocator for the replay's large arrays (ranks, operations), which each event visits at
// random: on transparent huge pages where the kernel offers them (its "madvise" mode), a
// million ranks' state takes hundreds of TLB entries instead of hundreds of thousands, and
// building it takes hundreds of page faults instead of hundreds of thousands. Small arrays come
// from operator new as usual; without huge pages the memory is ordinary pages.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace commgauge::sim {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

/// `bytes` of zeroed memory aligned to a huge page, advised to use huge pages.
inline void* allocate_huge(std::size_t bytes) {
  const std::size_t size = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  void* raw = ::mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // Trim to an aligned range: huge pages need 2 MiB alignment.
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const std::uintptr_t end = start + size + kHugePageBytes;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // a hint: failure is fine
  return reinterpret_cast<void*>(aligned);
}

inline void free_huge(void* p, std::size_t bytes) {
  ::munmap(p, (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
}

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(allocate_huge(bytes));
  }
  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes)
      ::operator delete(p);
    else
      free_huge(p, bytes);
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace commgauge::sim
