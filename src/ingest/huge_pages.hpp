// Transparent huge pages for the reader's big reserved vectors, where they cannot stall.
#pragma once

#include <cstddef>
#include <vector>

namespace npud {

// Advises 2 MiB pages for [data, data + bytes) where the kernel falls back to 4 KiB pages at
// once when none is free (see huge_pages.cpp); otherwise does nothing.
void advise_huge_pages(void* data, size_t bytes);

template <typename T>
void advise_huge_pages(std::vector<T>& v) {
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

}  // namespace npud
