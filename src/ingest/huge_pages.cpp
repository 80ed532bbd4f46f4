#include "ingest/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace npud {

namespace {

// Filling a big reserved vector page by page costs one page fault per 4 KiB, which on
// virtual machines is a large share of the reading time; 2 MiB pages cut that 512-fold.
// But where the kernel compacts memory on the spot for advised regions (THP defrag
// "madvise", Linux's default, "defer+madvise" or "always"), a fault can stall for that: on
// the 2-core development VM a 300 MB read took 1.05-1.60 s advised and 1.02-1.27 s not, with
// the same median (bench/README.md "Huge pages"). So the advice is given only where a
// missing huge page falls back to 4 KiB at once ("defer", "never").
bool huge_pages_without_stalls() {
  static const bool ok = [] {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/defrag");
    std::string modes;
    std::getline(f, modes);
    return modes.find("[defer]") != std::string::npos || modes.find("[never]") != std::string::npos;
  }();
  return ok;
}

}  // namespace

void advise_huge_pages(void* data, size_t bytes) {
  if (!huge_pages_without_stalls()) return;
  constexpr uintptr_t kHuge = 2u << 20;
  uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t end = begin + bytes;
  begin = (begin + kHuge - 1) & ~(kHuge - 1);
  end &= ~(kHuge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace npud
