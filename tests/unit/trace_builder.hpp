// Hand-written Traces for rule and report tests. Times are given in microseconds (what
// profilers show) and stored in nanoseconds. build() finalizes (nesting, self time, steps).
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ingest/chrome_categories.hpp"
#include "knowledge/knowledge.hpp"
#include "model/trace.hpp"
#include "model/finding.hpp"
#include "read_as.hpp"
#include "rules/rule.hpp"

// Tests fill these option structs with designated initializers and leave the rest at their
// defaults on purpose; g++ 12 warns about that under -Wextra.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace npud::test {

inline int64_t us(double v) { return int64_t(std::llround(v * 1000.0)); }

struct TensorSpec {
  std::string dtype = "float";
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;   // empty = not recorded
  int64_t storage = kUnset;       // capture: storage identity
  bool requires_grad = false;     // capture: `rg`
  std::string device;
};

struct OpOpts {
  OpKind kind = OpKind::Aten;
  int32_t pid = 1;
  int32_t tid = 1;
  int64_t external_id = kUnset;
  std::string file;               // user frame, when set
  int32_t line = 0;
  std::string module;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string detail;             // capture: "reason" text (string args of aten ops)
};

struct KernelOpts {
  TaskKind kind = TaskKind::Kernel;
  CopyDir copy = CopyDir::None;
  int32_t device = 0;
  int32_t stream = 7;
  int64_t correlation = kUnset;
  int64_t external_id = kUnset;
  std::string task_type;
};

struct RuntimeOpts {
  int32_t pid = 1;
  int32_t tid = 1;
  int64_t correlation = kUnset;
  int64_t external_id = kUnset;
};

class TraceBuilder {
 public:
  TraceBuilder() { t_.source = "test.json"; read_as_kineto(t_); }

  TraceBuilder& op(std::string_view name, double start_us, double dur_us, const OpOpts& o = {}) {
    Op op;
    op.name = t_.intern(name);
    op.kind = o.kind;
    op.pid = o.pid;
    op.tid = o.tid;
    op.start_ns = us(start_us);
    op.dur_ns = us(dur_us);
    op.external_id = o.external_id;
    op.module = t_.intern(o.module);
    if (!o.detail.empty()) op.detail = t_.intern(o.detail);
    if (!o.file.empty()) {
      uint32_t frame = t_.add_frame(o.file, o.line, "f");
      op.stack = t_.add_stack(std::span<const uint32_t>(&frame, 1));
    }
    op.inputs_begin = uint32_t(t_.tensor_refs.size());
    for (const TensorSpec& ts : o.inputs) t_.tensor_refs.push_back(tensor(ts));
    op.inputs_count = uint32_t(o.inputs.size());
    op.outputs_begin = uint32_t(t_.tensor_refs.size());
    for (const TensorSpec& ts : o.outputs) t_.tensor_refs.push_back(tensor(ts));
    op.outputs_count = uint32_t(o.outputs.size());
    t_.ops.push_back(op);
    return *this;
  }

  uint32_t tensor(const TensorSpec& ts) {
    TensorMeta m;
    m.dtype = t_.intern(ts.dtype);
    m.scalar_type = parse_dtype(ts.dtype);
    m.device = t_.intern(ts.device);
    m.storage = ts.storage;
    m.requires_grad = ts.requires_grad;
    m.dims_begin = uint32_t(t_.dims.size());
    m.rank = uint8_t(ts.shape.size());
    m.has_shape = true;
    t_.dims.insert(t_.dims.end(), ts.shape.begin(), ts.shape.end());
    if (!ts.strides.empty()) {
      m.has_strides = true;
      t_.dims.insert(t_.dims.end(), ts.strides.begin(), ts.strides.end());
    }
    return t_.add_tensor(m);
  }

  TraceBuilder& kernel(std::string_view name, double start_us, double dur_us, const KernelOpts& o = {}) {
    Kernel k;
    k.name = t_.intern(name);
    k.kind = o.kind;
    k.copy = o.copy;
    k.device = o.device;
    k.stream = o.stream;
    k.start_ns = us(start_us);
    k.dur_ns = us(dur_us);
    k.correlation = o.correlation;
    k.external_id = o.external_id;
    k.task_type = t_.intern(o.task_type);
    t_.kernels.push_back(k);
    return *this;
  }

  TraceBuilder& runtime(std::string_view name, RuntimeKind kind, double start_us, double dur_us,
                        const RuntimeOpts& o = {}) {
    // Named as a profile records it ("AscendCL@aclrtMalloc"), kept as the readers keep it.
    chrome::RuntimeName canonical = chrome::classify_runtime(name);
    RuntimeCall r;
    r.name = t_.intern(canonical.name);
    r.api = canonical.api;
    r.kind = kind;
    r.pid = o.pid;
    r.tid = o.tid;
    r.start_ns = us(start_us);
    r.dur_ns = us(dur_us);
    r.correlation = o.correlation;
    r.external_id = o.external_id;
    t_.runtime.push_back(r);
    return *this;
  }

  TraceBuilder& step(int64_t number, double start_us, double dur_us) {
    t_.steps.push_back({number, us(start_us), us(dur_us)});
    return *this;
  }

  // Captures keep overload names ("aten::mode" is the default overload).
  // A complete capture (CAPTURE001 quiet) recorded with torch `torch` ("" = not said).
  TraceBuilder& capture(std::string_view torch = "") {
    read_as_capture(t_);
    t_.capture.ended = true;
    t_.capture.reason = "done";
    if (!torch.empty()) t_.set_env("torch", torch);
    return *this;
  }
  // The dispatch facts the shim records once per op (npu_doctor_op events).
  TraceBuilder& dispatch(std::string_view op, char kind, bool cpu_kernel = false) {
    t_.op_dispatch.push_back({t_.intern(op), kind, cpu_kernel, false});
    return *this;
  }

  Trace& raw() { return t_; }
  Trace build() {
    t_.finalize();
    return std::move(t_);
  }

 private:
  Trace t_;
};

// A hand-made op list: `ops` spelled "add.Tensor" or "add".
inline OpList tiny_list(std::initializer_list<std::string_view> ops) {
  OpList list;
  for (std::string_view op : ops) list.add_aten(op);
  return list;
}

// A hand-made knowledge version with that list.
inline KnowledgeVersion tiny_version(std::string version, OpList list) {
  KnowledgeVersion v;
  v.version = std::move(version);
  v.torch = v.version;   // "2.1.0": the torch line its dispatch facts come from
  v.set_list(std::move(list));
  return v;
}

inline KnowledgeVersion tiny_version(std::string version, std::initializer_list<std::string_view> ops) {
  return tiny_version(std::move(version), tiny_list(ops));
}

// Findings of one rule on a trace, sorted like run_rules() does.
inline std::vector<Finding> run_rule(const Rule& rule, const Trace& trace, const KnowledgeVersion& npu,
                                     RuleOptions options = {}) {
  AnalysisContext ctx{trace, npu, options};
  return run_rules(ctx, {&rule});
}

inline std::vector<Finding> run_rule(const Rule& rule, const Trace& trace, RuleOptions options = {}) {
  static const KnowledgeVersion empty = tiny_version("2.1.0", {});
  return run_rule(rule, trace, empty, options);
}

}  // namespace npud::test
