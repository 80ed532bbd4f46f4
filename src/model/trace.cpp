#include "model/trace.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace npud {

std::string_view to_string(InputFormat f) {
  switch (f) {
    case InputFormat::KinetoJson: return "kineto-json";
    case InputFormat::AscendDir: return "ascend-profiler-dir";
    case InputFormat::AscendCsv: return "ascend-kernel-details-csv";
    case InputFormat::Capture: return "npu-doctor-capture";
    case InputFormat::Unknown: break;
  }
  return "unknown";
}

uint32_t Trace::add_frame(std::string_view file, int32_t line, std::string_view function) {
  frames.push_back({intern(file), line, intern(function)});
  return uint32_t(frames.size() - 1);
}

uint32_t Trace::add_stack(std::span<const uint32_t> frame_ids) {
  Stack s{uint32_t(stack_frames.size()), uint32_t(frame_ids.size())};
  stack_frames.insert(stack_frames.end(), frame_ids.begin(), frame_ids.end());
  stacks.push_back(s);
  return uint32_t(stacks.size() - 1);
}

void Trace::set_env(std::string_view key, std::string_view value) {
  for (auto& [k, v] : env) {
    if (k == key) {
      v = value;
      return;
    }
  }
  env.emplace_back(key, value);
}

std::string_view Trace::env_value(std::string_view key) const {
  for (const auto& [k, v] : env)
    if (k == key) return v;
  return {};
}

const CommTransport* Trace::transport(const CommOp& op, std::string_view type) const {
  for (const CommTransport& tr : transports(op))
    if (str(tr.type) == type) return &tr;
  return nullptr;
}

std::span<const uint32_t> Trace::frames_of(uint32_t stack) const {
  if (stack == kNone || stack >= stacks.size()) return {};
  const Stack& s = stacks[stack];
  return {stack_frames.data() + s.frames_begin, s.frames_count};
}

const Frame* Trace::user_frame(const Op& op) const {
  auto f = frames_of(op.stack);
  return f.empty() ? nullptr : &frames[f.front()];
}

int32_t Trace::step_at(int64_t ts) const {
  // steps are sorted by start and do not overlap
  auto it = std::upper_bound(steps.begin(), steps.end(), ts,
                             [](int64_t t, const Step& s) { return t < s.start_ns; });
  if (it == steps.begin()) return -1;
  --it;
  if (ts < it->start_ns + it->dur_ns) return int32_t(it - steps.begin());
  return -1;
}

int64_t Trace::span_ns() const {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  auto take = [&](int64_t s, int64_t d) {
    lo = std::min(lo, s);
    hi = std::max(hi, s + d);
  };
  for (const auto& o : ops) take(o.start_ns, o.dur_ns);
  for (const auto& k : kernels) take(k.start_ns, k.dur_ns);
  for (const auto& r : runtime) take(r.start_ns, r.dur_ns);
  return hi > lo ? hi - lo : 0;
}

void Trace::finalize() {
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  // Ops: per thread, by start, enclosing (longer) ranges first so parents precede children.
  std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.dur_ns > b.dur_ns;
  });
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const Kernel& a, const Kernel& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(runtime.begin(), runtime.end(),
                   [](const RuntimeCall& a, const RuntimeCall& b) { return a.start_ns < b.start_ns; });
  std::stable_sort(memory.begin(), memory.end(),
                   [](const MemoryEvent& a, const MemoryEvent& b) { return a.ts_ns < b.ts_ns; });
  std::stable_sort(amp_calls.begin(), amp_calls.end(), [](const AmpCall& a, const AmpCall& b) { return a.ts_ns < b.ts_ns; });
  std::stable_sort(grad_histograms.begin(), grad_histograms.end(),
                   [](const GradHistogram& a, const GradHistogram& b) { return a.ts_ns < b.ts_ns; });
  for (uint32_t i = 0; i < ops.size(); ++i)   // ops moved: numerics point back at their op
    if (ops[i].numeric < numerics.size()) numerics[ops[i].numeric].op = i;

  // Nesting: a stack of open ranges per thread.
  std::vector<uint32_t> open;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    Op& op = ops[i];
    if (i > 0 && (ops[i - 1].pid != op.pid || ops[i - 1].tid != op.tid)) open.clear();
    while (!open.empty()) {
      const Op& top = ops[open.back()];
      if (op.start_ns >= top.start_ns + top.dur_ns) open.pop_back();
      else break;
    }
    op.parent = open.empty() ? kNone : open.back();
    op.self_ns = op.dur_ns;
    if (op.parent != kNone) ops[op.parent].self_ns -= op.dur_ns;
    open.push_back(i);
  }
  for (Op& op : ops) {
    if (op.self_ns < 0) op.self_ns = 0;  // children overlapping by rounding
    if (op.step_index < 0) op.step_index = step_at(op.start_ns);
  }
  for (Kernel& k : kernels)
    if (k.step_index < 0) k.step_index = step_at(k.start_ns);
  for (RuntimeCall& r : runtime)
    if (r.step_index < 0) r.step_index = step_at(r.start_ns);
}

AmpApi classify_amp_call(std::string_view n) {
  // "GradScaler.scale", "torch.cuda.amp.GradScaler.unscale_", "torch.autocast", "torch.npu.amp.autocast"
  auto last = n.substr(n.rfind('.') == n.npos ? 0 : n.rfind('.') + 1);
  if (n.find("GradScaler") != n.npos) {
    if (last == "scale") return AmpApi::Scale;
    if (last == "unscale_") return AmpApi::Unscale;
    if (last == "step") return AmpApi::Step;
    if (last == "update") return AmpApi::Update;
    return AmpApi::Other;
  }
  if (n.find("autocast") != n.npos) return AmpApi::Autocast;
  return AmpApi::Other;
}

int64_t numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return 0;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

bool is_channels_last(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  if (shape.size() != 4 || strides.size() != 4 || is_contiguous(shape, strides)) return false;
  // N, C, H, W with strides H*W*C, 1, W*C, C (size-1 dims may carry any stride)
  const int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  return (c == 1 || strides[1] == 1) && (w == 1 || strides[3] == c) && (h == 1 || strides[2] == w * c) &&
         (n == 1 || strides[0] == h * w * c);
}

bool is_contiguous(std::span<const int64_t> shape, std::span<const int64_t> strides) {
  if (shape.size() != strides.size()) return true;  // unknown: do not accuse
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;  // size-1 dims may carry any stride
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

int64_t tensor_bytes(const Trace& t, const TensorMeta& m) {
  size_t es = dtype_size(m.scalar_type);
  return numel(t.shape(m)) * int64_t(es ? es : 4);
}

size_t dtype_size(std::string_view d) { return dtype_size(parse_dtype(d)); }

}  // namespace npud
