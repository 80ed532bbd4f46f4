// npu-doctor capture files (docs/formats/capture.md): the header and its end, dispatch facts,
// packages, user call stacks, tensor metadata, step numbers, and the amp-check records
// (docs/formats/amp.md).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ingest/chrome_builder.hpp"
#include "ingest/reader_caps.hpp"
#include "util/input_error.hpp"
#include "ingest/json_key.hpp"
#include "ingest/limits.hpp"

namespace npud::chrome {

namespace {

// The newest capture format version this reader knows (docs/formats/capture.md).
constexpr int64_t kCaptureFormatVersion = 1;

}  // namespace

// The capture's metadata events: the header ("npu_doctor"), its end, the packages that were
// imported and each op's dispatch facts.
void ChromeBuilder::capture_metadata(uint64_t offset) {
  if (ev_.name == "npu_doctor" && ev_.format == "npu-doctor-capture") {
    if (ev_.capture_version > kCaptureFormatVersion)
      throw InputError(file_, offset,
                       fmt::format("capture format version {} is newer than this npu-doctor reads ({}): update "
                                   "npu-doctor, or capture with the shim of this one",
                                   ev_.capture_version, kCaptureFormatVersion));
    is_capture_ = true;
    t_.format = InputFormat::Capture;
    // The shim records every dispatched op with its tensors, on whatever machine ran it; its
    // step 0 is the start-up; the header names the program and an end event how it stopped.
    t_.caps = kCaptureCaps;
    stream_.set_allow_truncated(true);  // a killed program leaves a cut-off last line
    stream_.set_event_per_line(true);   // ... and only the last
    t_.set_env("torch", ev_.torch);
    t_.set_env("python", ev_.python);
    t_.set_env("device", ev_.device_str);
    t_.set_env("torch_npu", ev_.torch_npu);
    t_.set_env("argv", ev_.argv);
    if (!ev_.cwd.empty()) t_.set_env("cwd", ev_.cwd);
    if (!ev_.steps.empty()) t_.set_env("steps", ev_.steps);
    // A worker of a distributed launch: the cluster view places it (cluster/rank_summary).
    if (ev_.capture_rank >= 0) t_.set_env("rank", std::to_string(ev_.capture_rank));
    if (ev_.capture_world_size > 0) t_.set_env("world_size", std::to_string(ev_.capture_world_size));
    if (ev_.has_amp) amp_.header(ev_, t_);
  } else if (ev_.name == "npu_doctor_end" && is_capture_) {
    t_.capture.ended = true;
    t_.capture.reason = ev_.reason;
    t_.capture.steps_completed = ev_.steps_completed;
    if (!ev_.message.empty()) t_.capture.exception = ev_.message;
  } else if (ev_.name == "npu_doctor_packages" && is_capture_ && !ev_.packages_raw.empty()) {
    read_string_map(ev_.packages_raw, "package:", 4096);
  } else if (ev_.name == "npu_doctor_model" && is_capture_ && !ev_.facts_raw.empty()) {
    read_model_facts(ev_.facts_raw);
  } else if (ev_.name == "npu_doctor_compile" && is_capture_ && !ev_.compile_raw.empty()) {
    read_compile(ev_.compile_raw);
  } else if (ev_.name == "npu_doctor_op" && is_capture_ && !ev_.op.empty()) {
    OpDispatch d;
    d.op = t_.intern(ev_.op);
    d.kind = ev_.dispatch.size() == 1 ? ev_.dispatch[0] : 0;
    d.cpu_kernel = ev_.cpu_kernel;
    d.expanded = ev_.expanded;
    t_.op_dispatch.push_back(d);
  }
}

// "npu_doctor_error": the shim's own failure; the first one is kept.
void ChromeBuilder::capture_error() {
  CaptureStatus& c = t_.capture;
  if (c.error.empty()) {
    c.error = ev_.message.empty() ? "an internal error" : std::string(ev_.message);
    c.error_op = ev_.op;
    c.error_thread = ev_.thread;
    c.error_where = ev_.where;
  }
}

// A capture op's step number (step_numbers_to_indexes() maps it to its step's index) and its
// amp-check numerics. The op is the next of t_.ops.
void ChromeBuilder::add_capture_op_fields(Op& op) {
  if (ev_.step >= 0 && ev_.step <= std::numeric_limits<int32_t>::max())
    op_step_numbers_.emplace_back(uint32_t(t_.ops.size()), int32_t(ev_.step));
  if (!ev_.amp[kAmpNumeric].empty()) {
    OpNumeric n;
    amp_.numeric(ev_.amp[kAmpNumeric], t_, n);
    op.numeric = uint32_t(t_.numerics.size());
    t_.numerics.push_back(n);
  }
}

// amp-check records (docs/formats/amp.md): gradient histograms and GradScaler/autocast calls.
void ChromeBuilder::amp_record() {
  if (ev_.cat == "amp_grad") {
    if (ev_.name != "grad_histogram") return;
    GradHistogram g;
    amp_.grad_histogram(ev_, t_, g);
    t_.grad_histograms.push_back(g);
    return;
  }
  AmpCall c;
  c.name = t_.intern(ev_.name);
  c.kind = classify_amp_call(ev_.name);
  c.ts_ns = ev_.ts_ns;
  c.step_number = ev_.step;
  if (!ev_.stack_raw.empty()) c.stack = capture_stack(ev_.stack_raw);
  amp_.amp_call(ev_, t_, c);
  t_.amp_calls.push_back(c);
}

void ChromeBuilder::add_capture_tensors(const std::vector<CaptureTensor>& ts, uint32_t& begin, uint32_t& count) {
  begin = uint32_t(t_.tensor_refs.size());
  for (const CaptureTensor& c : ts) {
    TensorMeta m;
    m.id = c.id;
    m.storage = c.storage;
    m.storage_offset = c.offset;
    m.requires_grad = c.requires_grad;
    m.dtype = t_.intern(c.dtype);
    m.scalar_type = dtype_of(m.dtype);
    m.device = t_.intern(c.device);
    if (!c.layout.empty() && c.layout != "strided") m.layout = t_.intern(c.layout);
    if (c.has_shape && shape_ok(ev_.tensor_ints.data() + c.shape_begin, c.shape_count)) {
      m.has_shape = true;
      m.rank = uint8_t(c.shape_count);
      m.dims_begin = uint32_t(t_.dims.size());
      auto& ints = ev_.tensor_ints;
      t_.dims.insert(t_.dims.end(), ints.begin() + c.shape_begin, ints.begin() + c.shape_begin + c.shape_count);
      if (c.has_strides && c.strides_count == c.shape_count) {
        m.has_strides = true;
        t_.dims.insert(t_.dims.end(), ints.begin() + c.strides_begin,
                       ints.begin() + c.strides_begin + c.strides_count);
      }
    }
    t_.tensor_refs.push_back(t_.add_tensor(m));
  }
  count = uint32_t(t_.tensor_refs.size()) - begin;
}

// "npu_doctor_packages": {"transformers": "5.17.0", ...} -> env "package:transformers" = "5.17.0"
// (analysis/source_sites names a finding's package with the version that ran); a model's facts
// with prefix "model:<path>:". Entries that are not strings are skipped; at most `most` kept.
void ChromeBuilder::read_string_map(std::string_view raw, std::string_view prefix, size_t most) {
  od::document doc;
  od::object obj;
  if (aux_parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS)
    return;
  size_t n = 0;
  for (auto f_res : obj) {
    od::field f;
    std::string_view key, value;
    if (std::move(f_res).get(f) || unescaped_key(f).get(key) || f.value().get_string().get(value)) continue;
    if (++n > most) break;   // a program imports hundreds of packages at most
    t_.set_env(fmt::format("{}{}", prefix, key), value);
  }
}

// "npu_doctor_model": a library model the program ran (the shim's _modules.library_model_facts)
// -> env "model:<path>:<fact>" and its path in "models" (comma-separated), which
// knowledge/model_facts reads for checking levers against the model's class and config.
void ChromeBuilder::read_model_facts(std::string_view raw) {
  od::document doc;
  od::object obj;
  std::string_view path;
  if (aux_parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS || obj["path"].get_string().get(path) != simdjson::SUCCESS ||
      path.empty() || path.find(',') != std::string_view::npos)
    return;
  std::string models(t_.env_value("models"));
  if (std::count(models.begin(), models.end(), ',') >= 63) return;   // the shim writes 64 at most
  t_.set_env("models", models.empty() ? std::string(path) : models + "," + std::string(path));
  read_string_map(raw, fmt::format("model:{}:", path), 64);
}

// "npu_doctor_compile": a graph break or a recompile torch.compile's dynamo logged, or how many
// graphs it compiled (the shim's _compiled.CompileWatch). Malformed or extra ones are passed by.
void ChromeBuilder::read_compile(std::string_view raw) {
  constexpr size_t kMaxGraphBreaks = 64;   // the shim writes 64 at most
  od::document doc;
  od::object obj;
  std::string_view kind;
  if (aux_parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS || obj["kind"].get_string().get(kind) != simdjson::SUCCESS)
    return;
  CaptureStatus& c = t_.capture;
  auto text = [&obj](std::string_view key) {
    std::string_view v;
    return obj[key].get_string().get(v) == simdjson::SUCCESS ? std::string(v.substr(0, 1000)) : std::string();
  };
  auto number = [&obj](std::string_view key) {
    int64_t v;
    return obj[key].get_int64().get(v) == simdjson::SUCCESS ? v : int64_t(-1);
  };
  if (kind == "graphs") {
    c.graphs_compiled = number("compiled");
    c.graphs_in_steps = number("in_steps");
    return;
  }
  const std::string file = text("file");
  const int64_t line = number("line");
  if (file.empty() || line <= 0 || line > (int64_t(1) << 30)) return;
  if (kind == "recompile") {
    if (c.recompiles.size() >= kMaxGraphBreaks) return;   // the shim writes as many at most
    Recompile r{file, text("function"), text("reason"), {}, int(line), std::max<int64_t>(1, number("count")),
                number("step")};
    od::array reasons;
    if (obj["reasons"].get_array().get(reasons) == simdjson::SUCCESS)
      for (auto v : reasons) {
        std::string_view s;
        if (v.get_string().get(s) == simdjson::SUCCESS && s != r.reason && r.other_reasons.size() < 2)
          r.other_reasons.emplace_back(s.substr(0, 1000));
      }
    c.recompiles.push_back(std::move(r));
    return;
  }
  if (kind != "graph_break" || c.graph_breaks.size() >= kMaxGraphBreaks) return;
  GraphBreak g;
  g.file = file;
  g.line = int(line);
  g.reason = text("reason");
  g.explanation = text("explanation");
  g.hint = text("hint");
  g.count = std::max<int64_t>(1, number("count"));
  g.step = number("step");
  c.graph_breaks.push_back(std::move(g));
}

// Capture "stack": [[file, line, func], ...], user frames only, innermost first.
uint32_t ChromeBuilder::capture_stack(std::string_view raw) {
  StrId key = stack_keys_.intern(raw);
  if (key < stack_of_key_.size() && stack_of_key_[key] != kNone) return stack_of_key_[key];
  std::vector<uint32_t> ids;
  od::document doc;
  // raw lies inside the event buffer, which stays readable for simdjson::SIMDJSON_PADDING bytes past it
  if (aux_parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
          .get(doc) == simdjson::SUCCESS) {
    od::array frames;
    if (doc.get_array().get(frames) == simdjson::SUCCESS) {
      for (auto fr_res : frames) {
        if (ids.size() == limits::kMaxStackFrames) {  // innermost frames first: keep those
          if (cut_stacks_++ == 0) first_cut_stack_offset_ = event_offset_;
          break;
        }
        od::array fr;
        if (fr_res.get_array().get(fr)) break;
        std::string_view file, func;
        int64_t line = 0;
        int i = 0;
        for (auto x : fr) {
          if (i == 0 && x.get_string().get(file)) file = {};
          else if (i == 1 && x.get_int64().get(line)) line = 0;
          else if (i == 2 && x.get_string().get(func)) func = {};
          ++i;
        }
        // file/func views live in aux_parser_'s buffer: interned right away by frame()
        ids.push_back(frame(file, int32_t(std::clamp<int64_t>(line, 0, std::numeric_limits<int32_t>::max())), func));
      }
    }
  }
  uint32_t sid = ids.empty() ? kNone : t_.add_stack(ids);
  if (key >= stack_of_key_.size()) stack_of_key_.resize(key + 1, kNone);
  stack_of_key_[key] = sid;
  return sid;
}

// Capture: a step whose end was never recorded (the program was killed in it, or the tail
// after the last step end of `--steps all`) has no ProfilerStep event. It is no step: counting
// it would turn per-step rates into rates over N+1 windows (issue 31 F-9). Its ops stay, outside
// any step; CAPTURE001 names it.
void ChromeBuilder::count_unended_steps() {
  if (op_step_numbers_.empty()) return;
  std::unordered_set<int64_t> ended;
  for (const Step& s : t_.steps) ended.insert(s.number);
  for (const auto& [op, number] : op_step_numbers_) {
    if (ended.count(number)) continue;
    ++t_.capture.unended_step_ops;
    t_.capture.unended_step = std::max(t_.capture.unended_step, int64_t(number));
  }
}

// Capture ops' step numbers become indexes of the sorted steps (Op::step_index).
void ChromeBuilder::step_numbers_to_indexes() {
  if (op_step_numbers_.empty()) return;
  std::unordered_map<int64_t, int32_t> index;
  for (size_t i = 0; i < t_.steps.size(); ++i) index.try_emplace(t_.steps[i].number, int32_t(i));
  for (const auto& [op, number] : op_step_numbers_) {
    auto f = index.find(number);
    if (f != index.end()) t_.ops[op].step_index = f->second;
  }
  op_step_numbers_.clear();
  op_step_numbers_.shrink_to_fit();
}

}  // namespace npud::chrome
