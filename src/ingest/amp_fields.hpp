// The amp-check values of a capture event (docs/formats/amp.md), read strictly: the parser
// keeps them as raw JSON text (EventFields::amp) and the capture builder hands them here once
// it knows the event is an amp-check record. A malformed value is an InputError naming the
// file and the byte offset of the value, like every other reader error (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "ingest/chrome_fields.hpp"
#include "model/trace.hpp"

namespace npud {

class AmpFieldReader {
 public:
  AmpFieldReader(simdjson::ondemand::parser& parser, const std::string& file) : parser_(parser), file_(file) {}

  // The event whose values follow: its text starts at `data`, at byte `offset` of the input.
  void set_event(const char* data, uint64_t offset, uint64_t index) {
    data_ = data;
    offset_ = offset;
    index_ = index;
  }

  // args.numeric of an aten op -> out (dtype interned into t).
  void numeric(std::string_view raw, Trace& t, OpNumeric& out);
  // "grad_histogram": counts and buckets (bins appended to t.grad_bins).
  void grad_histogram(const EventFields& ev, Trace& t, GradHistogram& out);
  // "amp_api": scale and dtype, when present.
  void amp_call(const EventFields& ev, Trace& t, AmpCall& out);
  // Header: "mode" and "amp" -> Trace::env ("mode", "amp_dtype", "amp_level", "amp_emulated",
  // "amp_metric_dtype", "amp_lists").
  void header(const EventFields& ev, Trace& t);

 private:
  [[noreturn]] void fail(std::string_view at, const std::string& msg) const;
  int64_t count(std::string_view raw, std::string_view what) const;
  double number(std::string_view raw, std::string_view what, bool allow_null) const;
  bool boolean(std::string_view raw, std::string_view what) const;
  std::string_view string(std::string_view raw, std::string_view what);
  void metrics(simdjson::ondemand::value v, std::string_view what, TensorMetrics& m) const;

  simdjson::ondemand::parser& parser_;
  const std::string& file_;
  const char* data_ = nullptr;
  uint64_t offset_ = 0;
  uint64_t index_ = 0;
  std::string scratch_;
};

}  // namespace npud
