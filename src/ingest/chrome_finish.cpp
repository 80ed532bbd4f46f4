// After the last event: trace_view events without "cat" resolved, reader warnings, times made
// relative to the earliest event, capture step numbers turned into step indexes.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ingest/chrome_builder.hpp"
#include "ingest/limits.hpp"

namespace npud::chrome {

void ChromeBuilder::finish() {
  resolve_deferred();
  npu_links_.apply(t_);

  const auto& tr = stream_.truncation();
  if (tr.happened) {
    if (tr.inside_event)
      t_.warnings.push_back({fmt::format("dropped a cut-off last event (the input ends at byte {})", tr.end_offset),
                             tr.event_offset});
    else
      t_.warnings.push_back(
          {fmt::format("input ends inside traceEvents at byte {}: file truncated? read what was there", tr.end_offset),
           tr.end_offset});
  }
  uint64_t open_left = 0;
  for (auto& [k, v] : open_) open_left += v.size();
  if (open_left)
    t_.warnings.push_back({fmt::format("{} 'B' events have no matching 'E' (kept with duration 0)", open_left), 0});
  if (unmatched_end_)
    t_.warnings.push_back({fmt::format("{} 'E' events have no matching 'B' (ignored)", unmatched_end_), 0});
  if (skipped_)
    t_.warnings.push_back(
        {fmt::format("skipped {} events of a kind npu-doctor does not read (first: {})", skipped_, first_skipped_),
         first_skipped_offset_});
  if (negative_durs_)
    t_.warnings.push_back({fmt::format("{} event{} with a negative duration, read as 0 (first: {})", negative_durs_,
                                       negative_durs_ == 1 ? "" : "s", first_negative_dur_),
                           first_negative_dur_offset_});
  if (cut_stacks_)
    t_.warnings.push_back({fmt::format("{} call stacks are deeper than {} frames: kept their innermost {}", cut_stacks_,
                                       limits::kMaxStackFrames, limits::kMaxStackFrames),
                           first_cut_stack_offset_});
  if (dropped_shapes_)
    t_.warnings.push_back({fmt::format("{} tensor shapes dropped: rank over {} or more than 2^59 elements "
                                       "(the tensors are kept without a shape)",
                                       dropped_shapes_, limits::kMaxRank),
                           first_dropped_shape_offset_});

  count_unended_steps();

  // Times relative to the earliest event.
  int64_t lo = std::numeric_limits<int64_t>::max();
  for (const Op& o : t_.ops) lo = std::min(lo, o.start_ns);
  for (const Kernel& k : t_.kernels) lo = std::min(lo, k.start_ns);
  for (const RuntimeCall& r : t_.runtime) lo = std::min(lo, r.start_ns);
  for (const Step& s : t_.steps) lo = std::min(lo, s.start_ns);
  for (const MemoryEvent& m : t_.memory) lo = std::min(lo, m.ts_ns);
  for (const GradHistogram& g : t_.grad_histograms) lo = std::min(lo, g.ts_ns);
  for (const AmpCall& c : t_.amp_calls) lo = std::min(lo, c.ts_ns);
  if (lo == std::numeric_limits<int64_t>::max()) lo = 0;
  for (Op& o : t_.ops) o.start_ns -= lo;
  for (Kernel& k : t_.kernels) k.start_ns -= lo;
  for (RuntimeCall& r : t_.runtime) r.start_ns -= lo;
  for (Step& s : t_.steps) s.start_ns -= lo;
  for (MemoryEvent& m : t_.memory) m.ts_ns -= lo;
  for (GradHistogram& g : t_.grad_histograms) g.ts_ns -= lo;
  for (AmpCall& c : t_.amp_calls) c.ts_ns -= lo;
  for (FreqSample& f : t_.ai_core_freq) f.ts_ns -= lo;
  t_.time_origin_ns = lo;
  int64_t absolute;
  if (have_base_ && !__builtin_add_overflow(lo, base_ns_, &absolute)) t_.time_origin_ns = absolute;

  // Steps sorted the way finalize() will, so that capture step numbers map to their indexes.
  std::sort(t_.steps.begin(), t_.steps.end(), [](const Step& a, const Step& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.number < b.number;
  });
  step_numbers_to_indexes();

  if (saw_gpu_ && t_.env_value("device").empty()) t_.set_env("device", "cuda");
  t_.input_bytes = stream_.bytes_read();
}

}  // namespace npud::chrome
