// Runs another source's reads (the file reads and the inflating of a .gz) on a second thread,
// a few chunks ahead of the reader, so that on two cores inflating and parsing overlap. Memory
// stays bounded: at most kChunks chunks of kChunkBytes are held. An error the inner source
// throws reaches the reader after every byte produced before it, at the same offset.
#pragma once

#include <memory>

#include "ingest/byte_source.hpp"

namespace npud {

// Wraps a compressed `src` in a prefetching source when this process may run on more than one
// CPU and NPUD_THREADS is not 1; returns it unchanged otherwise.
std::unique_ptr<ByteSource> prefetched(std::unique_ptr<ByteSource> src);

}  // namespace npud
