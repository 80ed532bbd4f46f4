// SYNC001 host-device-sync: places where the host waits for the device. Every such wait
// drains the NPU's task queue: the host cannot enqueue the next kernels until the device
// has caught up, so the device idles while Python runs. See docs/rules/SYNC001.md.
#include <cctype>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/names.hpp"
#include "analysis/placement.hpp"
#include "analysis/trace_index.hpp"
#include "knowledge/advice_texts.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/npu_cost.hpp"
#include "rules/rule_support.hpp"
#include "util/saturate.hpp"

namespace npud {
namespace {

enum Category : int {
  kScalarRead,        // item(), float(t), if t:
  kDataDependent,     // nonzero, masked_select, boolean index, unique: output size needs the data
  kHostCopy,          // .cpu(), .numpy(), DtoH memcpy, synchronous memcpy
  kExplicitSync,      // cudaStreamSynchronize, torch.cuda.synchronize()
  kBlockingUpload,    // x.to(device) of pageable host memory without non_blocking: waits for the device queue
  kMadeOnDevice,      // torch.tensor(data, device=d): the same blocking copy, of data made on the spot
};

bool is_upload(int category) { return category == kBlockingUpload || category == kMadeOnDevice; }

// The key of the fix for a category (data/texts/rules.tsv).
std::string_view fix_key(int category) {
  switch (category) {
    case kScalarRead: return "fix_scalar_read";
    case kDataDependent: return "fix_data_dependent";
    case kHostCopy: return "fix_host_copy";
    case kMadeOnDevice: return "fix_made_on_device";
    case kBlockingUpload: return "fix_blocking_upload";
    default: return "fix_synchronize";
  }
}

// Aten ops that make the host wait: their result (or its size) is read on the host.
int aten_sync_category(const Trace& t, const Op& op, bool* is_sync) {
  *is_sync = true;
  std::string_view base = aten_base(t.str(op.name));
  if (base == "item" || base == "_local_scalar_dense" || base == "is_nonzero") return kScalarRead;
  if (base == "nonzero" || base == "masked_select" || base == "unique" || base == "_unique" ||
      base == "_unique2" || base == "unique_consecutive" || base == "unique_dim" ||
      base == "unique_dim_consecutive" || base == "nonzero_numpy")
    return kDataDependent;
  if (base == "index") {
    // x[mask]: a boolean index tensor (after self) makes the output size data-dependent.
    auto in = t.inputs(op);
    for (size_t i = 1; i < in.size(); ++i) {
      if (t.tensors[in[i]].scalar_type == DType::Bool) return kDataDependent;
    }
  }
  *is_sync = false;
  return 0;
}

int python_sync_category(std::string_view name) {
  if (name.find("synchronize") != std::string_view::npos) return kExplicitSync;
  if (name.find(".cpu") != std::string_view::npos || name.find("numpy") != std::string_view::npos ||
      name.find("tolist") != std::string_view::npos || name.find("to(cpu)") != std::string_view::npos)
    return kHostCopy;
  return kScalarRead;
}

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

bool is_host(std::string_view device) { return device.empty() || device == "cpu" || device.starts_with("cpu:"); }

// A host-to-device copy that waits: in a CPU capture, a `.to(device)` that will upload (a
// placement event) without non_blocking=True; in a device capture, the copy op itself (cpu in,
// device out) without it. (Placement skips tensors the program placed before.)
bool is_blocking_upload(const Trace& t, const Op& op, bool host_run) {
  std::string_view detail = op.detail ? t.str(op.detail) : std::string_view{};
  // non_blocking=True; or a factory with a device named (`torch.randint(..., device=x.device)`):
  // made on the device, no copy
  if (contains(detail, "non_blocking=True") || detail == "made on the device") return false;
  if (op.kind == OpKind::Placement) return host_run;
  if (op.kind != OpKind::Aten || host_run || !t.caps.dispatched_ops) return false;
  std::string_view base = aten_base(t.str(op.name));
  if (base != "_to_copy" && base != "copy_") return false;
  auto in = t.inputs(op), out = t.outputs(op);
  if (in.empty() || out.empty()) return false;
  const TensorMeta& src = t.tensors[in[base == "copy_" && in.size() > 1 ? 1 : 0]];
  return is_host(t.str(src.device)) && !is_host(t.str(t.tensors[out[0]].device));
}

// Runtime calls that block the host until the device is done: *Synchronize*, and
// synchronous copies (cudaMemcpy, hipMemcpy, aclrtMemcpy: not the *Async variants).
bool is_blocking_runtime(const Trace& t, const RuntimeCall& r, int* category) {
  std::string_view name = t.str(r.name);
  if (r.kind == RuntimeKind::Sync || contains(name, "Synchronize")) {
    *category = kExplicitSync;
    return true;
  }
  if ((r.kind == RuntimeKind::Memcpy || contains(name, "Memcpy")) && !contains(name, "Async") &&
      !contains(name, "GetWorkspace")) {
    *category = kHostCopy;
    return true;
  }
  return false;
}

class HostDeviceSync final : public Rule {
 public:
  const RuleInfo& info() const override {
    static constexpr RuleInfo kInfo{"SYNC001", "host-device-sync",
        "host waits for the device: item(), data-dependent shapes, DtoH copies, synchronize calls",
        Severity::Error};
    return kInfo;
  }

  void check(const AnalysisContext& ctx, std::vector<Finding>& out) const override {
    Scan s(ctx);
    mark_device_waits(s);
    find_sync_ops(s);
    mark_upload_copies(s);
    add_blocking_runtime_calls(s);
    add_dtoh_copies(s);
    report(s, out);
  }

 private:
  // What the phases share: the groups found so far and the per-op marks each phase leaves
  // for the next.
  struct Scan {
    explicit Scan(const AnalysisContext& ctx)
        : t(ctx.trace), index(ctx.index()), n(t.ops.size()), anchor(n, 0), covered(n, 0), synced_top(n, 0),
          placement(t), device_wait(n, 0) {}

    const Trace& t;
    const TraceIndex& index;
    GroupMap groups;
    const size_t n;
    // anchor: this op is reported; covered: an ancestor is reported (its wait explains ours).
    std::vector<uint8_t> anchor, covered;
    std::vector<uint8_t> synced_top;  // top aten op of a reported runtime sync
    // A read of host-side data (batch indices, CPU counters) waits for nothing on an NPU: it
    // and the ops inside it are not syncs.
    const Placement placement;
    // Upload sites that later move a tensor already on the device (diffusers' add_noise:
    // `self.alphas_cumprod = self.alphas_cumprod.to(device)` each call)
    std::unordered_set<std::string> kept_on_device;
    // A CUDA/ROCm profile records the runtime calls on the thread that makes them, so a real
    // read of device data shows as a copy or a synchronize call inside the op; an aten::item
    // without one read a CPU tensor (numpy memmap indexing with a CPU index tensor in nanoGPT's
    // get_batch): host work. (torch_npu profiles run the device calls on its task-queue thread:
    // there the op is judged by name alone.)
    std::vector<uint8_t> device_wait;
    bool runtime_recorded = false;
    std::vector<uint8_t> uploads;          // top aten ops that copied host data to the device
    std::vector<uint8_t> runtime_counted;  // runtime calls reported as syncs of their own

    // One user line is one finding, whatever reads there (LBFGS's step line reads a bool, a
    // float and an alpha scalar: one cause); ops without a user frame group by op and callers.
    std::string group_key(uint32_t i, int category, Location& loc, std::string& chain) const {
      const Op& op = t.ops[i];
      loc = location_of(index, i);
      if (!call_site(loc) && op.parent != kNone) chain = index.parent_chain(op.parent, 3);
      std::string key = !call_site(loc) ? fmt::format("op\x1f{}\x1f{}", loc.op, chain) : "line\x1f" + site_key(loc);
      return is_upload(category) ? "up\x1f" + key : key;   // an upload: its own finding, with its own fix
    }

    void add_op_group(uint32_t i, int category) {
      const Op& op = t.ops[i];
      Location loc;
      std::string chain;
      std::string key = group_key(i, category, loc, chain);
      bool created = false;
      EventGroup& g = groups.get(key, &created);
      if (created) {
        g.what = loc.op;
        g.location = std::move(loc);
        g.context = std::move(chain);
        g.category = category;
      }
      g.add_example(t.str(op.name), 4);
      g.add(op.step_index, op.dur_ns);
    }
  };

  // Marks the ops that a recorded device copy or synchronize call ran inside (see device_wait).
  static void mark_device_waits(Scan& s) {
    const Trace& t = s.t;
    if (t.caps.runtime_calls) {
      for (const RuntimeCall& call : t.runtime) {
        if (call.kind != RuntimeKind::Memcpy && call.kind != RuntimeKind::Sync) continue;
        // The CUDA driver's too (cuMemcpyDtoHAsync, cuStreamSynchronize: extensions and
        // libraries that call the driver), recorded on the calling thread like the runtime's.
        if (call.api != RuntimeApi::Cuda && call.api != RuntimeApi::CudaDriver && call.api != RuntimeApi::Hip) continue;
        s.runtime_recorded = true;
        for (uint32_t op = s.index.op_of_runtime(call); op != kNone && !s.device_wait[op]; op = t.ops[op].parent)
          s.device_wait[op] = 1;
      }
    }
  }

  // The ops that wait: blocking uploads, Python-level syncs and syncing aten ops, outermost first.
  static void find_sync_ops(Scan& s) {
    const Trace& t = s.t;
    const bool host_run = t.caps.dispatched_ops &&
                          (t.env_value("device").empty() || t.env_value("device") == "cpu");
    for (uint32_t i = 0; i < s.n; ++i) {
      const Op& op = t.ops[i];
      if (op.parent != kNone) s.covered[i] = s.covered[op.parent] || s.anchor[op.parent];
      if (s.covered[i]) continue;
      if (add_blocking_upload(s, i, host_run)) continue;
      if ((op.kind == OpKind::PythonSync || op.kind == OpKind::Aten) && s.placement.host_only(i)) {
        s.covered[i] = 1;
        continue;
      }
      if (op.kind == OpKind::PythonSync) {
        s.anchor[i] = 1;
        s.add_op_group(i, python_sync_category(t.str(op.name)));
      } else if (op.kind == OpKind::Aten) {
        bool is_sync = false;
        int category = aten_sync_category(t, op, &is_sync);
        if (!is_sync) continue;
        if (s.runtime_recorded && !s.device_wait[i]) {
          s.covered[i] = 1;   // no copy and no synchronize inside: host work
          continue;
        }
        s.anchor[i] = 1;
        s.add_op_group(i, category);
      }
    }
  }

  // Op i when it is a blocking upload: reported (or noted as keeping its tensors on the
  // device); true when it was one, and nothing else is to be judged of it.
  static bool add_blocking_upload(Scan& s, uint32_t i, bool host_run) {
    const Trace& t = s.t;
    const Op& op = t.ops[i];
    // Uploads of data: not what model code moves to its inputs' device inside a forward
    // (buffers and constants moved with the model: no-ops on the NPU); torch.tensor(data,
    // device=d) there copies each time.
    const bool moved_by_model =
        op.kind == OpKind::Placement && op.module && !t.str(op.module).empty() && !t.inputs(op).empty();
    if (op.step_index >= 0 && !moved_by_model && is_blocking_upload(t, op, host_run)) {
      s.anchor[i] = 1;
      // torch.tensor(data, device=d): no input, the data is made on the spot
      const int category = t.inputs(op).empty() ? kMadeOnDevice : kBlockingUpload;
      if (!s.placement.already_placed(i)) {
        s.add_op_group(i, category);
      } else {   // the site moves a tensor that is on the device already: it keeps its tensors there
        Location loc;
        std::string chain;
        s.kept_on_device.insert(s.group_key(i, category, loc, chain));
      }
      return true;
    }
    return false;
  }

  // Profiles: a synchronize inside a host-to-device copy (`x.to(device)` of pageable memory,
  // non_blocking=False) is that copy waiting. Only copy ops: an HtoD memcpy inside a conv2d
  // (cudnn's own bookkeeping) is no upload of the program's data.
  static void mark_upload_copies(Scan& s) {
    const Trace& t = s.t;
    for (const Kernel& k : t.kernels) {
      if (k.kind != TaskKind::Memcpy || k.copy != CopyDir::HtoD) continue;
      uint32_t top = s.index.top_aten(s.index.op_of_kernel(k));
      if (top == kNone) continue;
      std::string_view base = aten_base(t.str(t.ops[top].name));
      if (base != "to" && base != "_to_copy" && base != "copy_" && base != "cuda") continue;
      if (s.uploads.empty()) s.uploads.resize(s.n, 0);
      s.uploads[top] = 1;
    }
  }

  // Blocking runtime calls (synchronize, synchronous memcpy) that no reported op explains.
  static void add_blocking_runtime_calls(Scan& s) {
    const Trace& t = s.t;
    const TraceIndex& index = s.index;
    s.runtime_counted.assign(t.runtime.size(), 0);
    for (uint32_t r = 0; r < t.runtime.size(); ++r) {
      const RuntimeCall& call = t.runtime[r];
      int category = 0;
      if (!is_blocking_runtime(t, call, &category)) continue;
      uint32_t op = index.op_of_runtime(call);
      if (op != kNone && (s.anchor[op] || s.covered[op])) continue;  // explained by a reported op
      uint32_t top = index.top_aten(op);
      if (top != kNone && top < s.uploads.size() && s.uploads[top]) category = kBlockingUpload;
      if (top != kNone) s.synced_top[top] = 1;
      s.runtime_counted[r] = 1;
      std::string what(t.str(call.name));
      Location loc = location_of(index, top);
      std::string key = fmt::format("rt\x1f{}\x1f{}\x1f{}", what, loc.op, site_key(loc));
      bool created = false;
      EventGroup& g = s.groups.get(key, &created);
      if (created) {
        g.what = what;
        if (loc.op.empty()) loc.op = what;
        g.location = std::move(loc);
        g.category = category;
      }
      g.add(call.step_index, call.dur_ns);
    }
  }

  // Device-to-host copy tasks that neither a reported op nor a reported runtime call explains.
  static void add_dtoh_copies(Scan& s) {
    const Trace& t = s.t;
    const TraceIndex& index = s.index;
    for (const Kernel& k : t.kernels) {
      if (k.kind != TaskKind::Memcpy || k.copy != CopyDir::DtoH) continue;
      uint32_t r = index.runtime_of_kernel(k);
      if (r != kNone && s.runtime_counted[r]) continue;
      uint32_t op = index.op_of_kernel(k);
      if (op != kNone && (s.anchor[op] || s.covered[op] || s.synced_top[index.top_aten(op)])) continue;
      uint32_t top = index.top_aten(op);
      Location loc = location_of(index, top);
      std::string key = fmt::format("dtoh\x1f{}\x1f{}", loc.op, site_key(loc));
      bool created = false;
      EventGroup& g = s.groups.get(key, &created);
      if (created) {
        g.what = "Memcpy DtoH";
        if (loc.op.empty()) loc.op = "Memcpy DtoH";
        g.location = std::move(loc);
        g.category = kHostCopy;
      }
      // The host waits at least as long as its copy call; without one, the copy itself.
      g.add(k.step_index, r != kNone ? t.runtime[r].dur_ns : k.dur_ns);
    }
  }

  // A site that uploaded once in the recorded steps and then found its tensor on the device
  // keeps it there: one placement (on the NPU made at the site's first call, often before the
  // recorded steps), not a per-step copy.
  static std::unordered_set<const EventGroup*> one_off_placements(Scan& s) {
    std::unordered_set<const EventGroup*> one_off;
    for (const std::string& key : s.kept_on_device)
      if (const EventGroup* g = s.groups.find(key); g && g->count == 1) one_off.insert(g);
    return one_off;
  }

  // One finding per group, in the order the groups were made.
  static void report(Scan& s, std::vector<Finding>& out) {
    const TraceIndex& index = s.index;
    std::unordered_set<const EventGroup*> one_off = one_off_placements(s);
    const bool capture = s.t.caps.estimated_costs;
    for (EventGroup& g : s.groups.groups()) {
      if (one_off.contains(&g)) continue;
      Finding f;
      f.rule = "SYNC001";
      double per_step = index.per_step(g.in_steps, g.in_first_step, g.count);
      // An upload is a per-step cost only when it happens in the steps: one-off placements
      // before the loop (`data.to(device)` of batchify, `Generator(...).to(device)`, the start-up
      // step 0 under `--steps all`) copy once, and pinned memory would not change that (issue 45).
      if (is_upload(g.category) && index.step_count() > 0 && per_step == 0.0) continue;
      // So is a single read outside the steps (a sample decoded with .tolist() after training):
      // one wait, once; reads repeated there (an eval loop after training) still count.
      if (capture && index.step_count() > 0 && per_step == 0.0 && g.count == 1) continue;
      fill_finding(s, g, per_step, f);
      out.push_back(std::move(f));
    }
  }

  // Cost, severity, message, metrics, fix and notes of group g's finding.
  static void fill_finding(const Scan& s, EventGroup& g, double per_step, Finding& f) {
    const TraceIndex& index = s.index;
    const int64_t wall = index.wall_ns();
    const bool capture = s.t.caps.estimated_costs;
    double time_share = share(g.time_ns, wall);
    bool every_step = index.step_count() > 0 && per_step >= 1.0;
    // A capture ran elsewhere (the CPU): its sync calls cost nothing there; on an NPU each one
    // drains the queue (docs/cost-model.md). Profiles measured the wait itself.
    f.cost_ns = capture ? saturating_ns(double(g.count) * cost::kSyncNs) : g.time_ns;
    f.severity = every_step && (capture || time_share >= 0.01) ? Severity::Error : Severity::Warning;
    if (g.examples.size() > 1) g.what = fmt::format("{}", fmt::join(g.examples, ", "));
    f.message = sync_message(s, g, f.cost_ns, time_share);
    f.location = g.location;
    f.metrics = {{"count", double(g.count)},
                 {"per_step", per_step},
                 {"time_ns", double(g.time_ns)},
                 {"time_share", time_share}};
    f.fix = advice("SYNC001", fix_key(g.category));
    if (!g.context.empty()) f.notes.push_back(advice("SYNC001", "called_from_note", {{"context", g.context}}));
    if (g.what == "Memcpy DtoH" && g.location.op == g.what)
      f.notes.push_back(advice("SYNC001", "no_host_op_note"));
  }

  static std::string sync_message(const Scan& s, const EventGroup& g, int64_t cost_ns, double time_share) {
    const TraceIndex& index = s.index;
    const bool capture = s.t.caps.estimated_costs;
    std::string place = where(g.location);
    std::string at = place.empty() || place == g.what ? "" : (g.location.file.empty() ? " in " : " at ") + place;
    std::string rate = per_step_note(index, g);
    // A capture's own wait times are another device's: the message gives the NPU estimate, and
    // names the measured time too, which the time_ns metric beside it shows (issue 30).
    if (capture && is_upload(g.category))
      return fmt::format("{}{}: {} blocking host-to-device cop{}{}, each waiting for the NPU's task queue to "
                         "drain (about {} in all on an NPU, `npu-doctor docs cost-model`; {} measured here)",
                         g.what, at, g.count, g.count == 1 ? "y" : "ies", rate, format_duration(cost_ns),
                         format_duration(g.time_ns));
    else if (capture)
      return fmt::format("{}{}: {} host-device sync{}{}, each draining the NPU's task queue (about {} in all "
                         "on an NPU, `npu-doctor docs cost-model`; {} measured here)",
                         g.what, at, g.count, g.count == 1 ? "" : "s", rate, format_duration(cost_ns),
                         format_duration(g.time_ns));
    else
      return fmt::format("{}{}: {} host-device sync{}{}, {} host blocked ({} of {})", g.what, at, g.count,
                         g.count == 1 ? "" : "s", rate, format_duration(g.time_ns), format_share(time_share),
                         index.step_count() > 0 ? "step time" : "trace time");
  }
};

}  // namespace

const Rule& sync001_rule() {
  static const HostDeviceSync rule;
  return rule;
}

}  // namespace npud
