// Chrome Trace Event JSON -> Trace: the read loop over the event stream. ChromeBuilder
// (chrome_builder.hpp) maps each event onto the event model.
#include "ingest/chrome_json.hpp"
#include "ingest/reader_caps.hpp"

#include <fmt/format.h>

#include <new>

#include "ingest/byte_source.hpp"
#include "ingest/chrome_builder.hpp"
#include "util/input_error.hpp"
#include "ingest/json_stream.hpp"
#include "ingest/prefetch_source.hpp"

namespace npud {

namespace {

using chrome::ChromeBuilder;

static_assert(JsonEventStream::kPadding >= simdjson::SIMDJSON_PADDING, "events must be followed by simdjson's padding");

bool wanted_top_key(std::string_view k) {
  return k == "displayTimeUnit" || k == "baseTimeNanoseconds" || k == "distributedInfo" ||
         k == "deviceProperties" || k == "schemaVersion";
}

Trace read_source(ByteSource& src, const std::string& name, const ReadOptions& opts) {
  Trace trace;
  trace.source = name;
  trace.format = InputFormat::KinetoJson;
  // torch.profiler's: host runtime calls on their threads (a capture's header resets these).
  trace.caps = kKinetoCaps;
  // A small input gets a buffer of its size, not the 16 MiB chunk: many small reads (tests,
  // fuzzing, a directory of small traces) would otherwise each allocate and clear 16 MiB.
  size_t chunk = 16u << 20;
  if (!src.compressed() && src.size_hint > 0 && src.size_hint < chunk) chunk = size_t(src.size_hint) + 1;
  JsonEventStream stream(src, name, wanted_top_key, chunk);
  stream.set_allow_truncated(opts.allow_truncated);
  if (opts.progress) stream.set_on_chunk([&] { opts.progress(src.consumed(), src.total()); });
  ChromeBuilder builder(trace, stream, name);
  builder.reserve(src.size_hint);
  JsonEventStream::Item item;
  try {
    while (stream.next(item)) {
      if (item.kind != JsonEventStream::Item::Kind::Event) {
        builder.on_top_value(item);
        continue;
      }
      if (opts.max_events && item.index >= opts.max_events)
        throw InputError(name, item.offset,
                         fmt::format("more than {} events (about {:.1f} GB in memory); pass --max-events N to read "
                                     "more, or profile fewer steps",
                                     opts.max_events, double(opts.max_events) * 150 / 1e9));
      builder.on_event(item);
    }
    builder.finish();
  } catch (const std::bad_alloc&) {
    throw InputError(name, item.offset,
                     fmt::format("out of memory after {} events; profile fewer steps or pass a smaller --max-events",
                                 item.index));
  }
  trace.finalize();
  return trace;
}

}  // namespace

Trace read_chrome_json(const std::string& path, const ReadOptions& opts) {
  auto src = prefetched(open_byte_source(path));   // reading and inflating on a second core
  return read_source(*src, path, opts);
}

Trace read_chrome_json_buffer(std::string_view json, const std::string& name, const ReadOptions& opts) {
  auto src = memory_byte_source(json, name);
  return read_source(*src, name, opts);
}

}  // namespace npud
