// Kineto / torch.profiler traces: "Input Dims"/"Input type" shapes, "Call stack" and
// python_function frames, and the top-level keys (displayTimeUnit, baseTimeNanoseconds,
// distributedInfo, deviceProperties, schemaVersion).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>

#include "ingest/chrome_builder.hpp"
#include "util/input_error.hpp"
#include "ingest/json_key.hpp"
#include "ingest/limits.hpp"
#include "model/package_path.hpp"

namespace npud::chrome {

namespace {

// Kineto "Input type" entries that are not tensors.
bool is_tensor_type(std::string_view t) {
  if (t.empty()) return false;
  static constexpr std::string_view kNot[] = {"Scalar", "ScalarList", "GenericList", "TensorList", "None",
                                              "String", "Device",     "Layout",      "ScalarType", "MemoryFormat"};
  for (auto n : kNot)
    if (t == n) return false;
  return true;
}

// Code the program did not write: torch's own files, installed packages (absolute paths into
// site-packages, or the paths Kineto shortens relative to sys.path: "transformers/masking_utils.py"),
// `<frozen runpy>`-style frames and the standard library as Kineto shortens it ("threading.py").
bool is_library_file(std::string_view f) {
  if (is_torch_file(f) || !package_of_path(f).first.empty() || f.starts_with("<")) return true;
  if (f.starts_with("/")) return false;
  std::string_view root = f.substr(0, f.find('/'));
  static constexpr std::string_view kStandardLibrary[] = {
      "multiprocessing", "concurrent", "asyncio", "importlib", "json", "logging", "unittest", "collections",
      "threading.py", "runpy.py", "contextlib.py", "functools.py", "queue.py", "selectors.py", "socket.py",
      "typing.py", "abc.py", "copy.py", "weakref.py", "random.py", "warnings.py", "enum.py", "inspect.py"};
  for (std::string_view lib : kStandardLibrary)
    if (root == lib) return true;
  return false;
}

}  // namespace

// Legacy Kineto "Call stack": "file(line): func;file(line): func", innermost first.
// `enclosing`: one python_function `<module>` frame (python_function_frame), made a frame of its
// own, not frame()'s shared one: a "Call stack" naming the same file:line means that line.
uint32_t ChromeBuilder::legacy_stack(std::string_view text, bool enclosing) {
  StrId key = enclosing ? stack_keys_.intern("\x01enclosing:" + std::string(text)) : stack_keys_.intern(text);
  if (key < stack_of_key_.size() && stack_of_key_[key] != kNone) return stack_of_key_[key];
  std::vector<uint32_t> all, user;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t semi = text.find(';', pos);
    std::string_view seg = text.substr(pos, semi == text.npos ? text.npos : semi - pos);
    pos = semi == text.npos ? text.size() + 1 : semi + 1;
    while (!seg.empty() && seg.front() == ' ') seg.remove_prefix(1);
    if (seg.empty()) continue;
    std::string_view file = seg, func;
    int32_t line = 0;
    size_t close = seg.find("): ");
    size_t open = close == seg.npos ? seg.npos : seg.rfind('(', close);
    if (open != seg.npos) {
      file = seg.substr(0, open);
      std::string_view num = seg.substr(open + 1, close - open - 1);
      std::from_chars(num.data(), num.data() + num.size(), line);
      func = seg.substr(close + 3);
    }
    if (all.size() == limits::kMaxStackFrames) {  // innermost frames first: keep those
      if (cut_stacks_++ == 0) first_cut_stack_offset_ = event_offset_;
      break;
    }
    uint32_t id = enclosing ? t_.add_frame(file, line, func) : frame(file, line, func);
    if (enclosing) t_.frames[id].enclosing = true;
    all.push_back(id);
    if (!is_library_file(file)) user.push_back(id);
  }
  uint32_t sid = all.empty() ? kNone : t_.add_stack(user.empty() ? all : user);
  if (key >= stack_of_key_.size()) stack_of_key_.resize(key + 1, kNone);
  stack_of_key_[key] = sid;
  return sid;
}

// Kineto's python_function events are named "file(line): func" (with_stack=True), one event per
// Python call, nested: the ops inside take their file:line from the innermost one that gives a
// frame (analysis/trace_index.hpp stack_frames), and rules walk on up to the program's own
// (rules/rule_support.cpp location_of). The program's files and installed packages' (the library
// site a finding names) give a frame; torch's own and the standard library's give none.
// The line is where the function starts, or, for frames already running when the profiler
// started (a script's `<module>` running the training loop), where they were then. That line
// is the place the trace itself names, which the user can open, suppress a finding at and see
// in code scanning (issue 40); but every op of the loop shares it, so the frame is marked
// `enclosing` and rules do not group ops by it (rule_support.cpp call_site).
uint32_t ChromeBuilder::python_function_frame(std::string_view name) {
  size_t close = name.find("): ");
  size_t open = close == name.npos ? name.npos : name.rfind('(', close);
  if (open == name.npos) return kNone;
  std::string_view file = name.substr(0, open);
  if (is_library_file(file) && (package_of_path(file).first.empty() || is_torch_file(file))) return kNone;
  return legacy_stack(name, name.substr(close + 3) == "<module>");
}

void ChromeBuilder::add_kineto_inputs(Op& op) {
  const NestedInts& d = ev_.dims;
  const NestedInts& s = ev_.strides;
  size_t n = std::max(d.top.size(), ev_.types.size());
  op.inputs_begin = uint32_t(t_.tensor_refs.size());
  auto add = [&](std::string_view dtype, bool is_tensor, const NestedInts::Entry* shape, const NestedInts::Entry* str,
                 const std::vector<int64_t>& sints) {
    TensorMeta m;
    m.dtype = t_.intern(dtype);
    m.scalar_type = dtype_of(m.dtype);
    m.is_tensor = is_tensor;
    if (is_tensor && shape && shape->kind == NestedInts::Entry::Ints &&
        shape_ok(d.ints.data() + shape->begin, shape->count)) {
      m.dims_begin = uint32_t(t_.dims.size());
      m.rank = uint8_t(shape->count);
      m.has_shape = true;
      t_.dims.insert(t_.dims.end(), d.ints.begin() + shape->begin, d.ints.begin() + shape->begin + shape->count);
      if (str && str->kind == NestedInts::Entry::Ints && str->count == shape->count) {
        m.has_strides = true;
        t_.dims.insert(t_.dims.end(), sints.begin() + str->begin, sints.begin() + str->begin + str->count);
      }
    }
    t_.tensor_refs.push_back(t_.add_tensor(m));
  };
  for (size_t i = 0; i < n; ++i) {
    std::string_view type = i < ev_.types.size() ? ev_.types[i] : std::string_view{};
    const NestedInts::Entry* de = i < d.top.size() ? &d.top[i] : nullptr;
    const NestedInts::Entry* se = i < s.top.size() ? &s.top[i] : nullptr;
    if (de && de->kind == NestedInts::Entry::Lists) {
      // a tensor list: one entry per element
      for (uint32_t j = 0; j < de->count; ++j) {
        const NestedInts::Entry* ss =
            (se && se->kind == NestedInts::Entry::Lists && j < se->count) ? &s.lists[se->begin + j] : nullptr;
        add({}, true, &d.lists[de->begin + j], ss, s.ints);
      }
      continue;
    }
    bool tensor = ev_.has_types ? is_tensor_type(type) : (de && de->count > 0);
    add(type, tensor, de, se, s.ints);
  }
  op.inputs_count = uint32_t(t_.tensor_refs.size()) - op.inputs_begin;
}

void ChromeBuilder::on_top_value(const JsonEventStream::Item& it) {
  od::document doc;
  auto fail = [&](simdjson::error_code e) {
    throw InputError(file_, it.offset,
                     fmt::format("invalid JSON in top-level \"{}\" ({})", it.key, simdjson::error_message(e)));
  };
  if (auto e = parser_.iterate(simdjson::padded_string_view(it.data, it.len, it.len + simdjson::SIMDJSON_PADDING)).get(doc))
    fail(e);
  auto scalar_text = [&](od::document& d) -> std::string {
    std::string_view s;
    if (d.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
    int64_t i;
    if (d.get_int64().get(i) == simdjson::SUCCESS) return std::to_string(i);
    double x;
    if (d.get_double().get(x) == simdjson::SUCCESS) return fmt::format("{}", x);
    return {};
  };
  if (it.key == "displayTimeUnit") {
    // A display hint of the Chrome viewer: ts/dur stay microseconds whatever it says.
    t_.set_env("display_time_unit", scalar_text(doc));
  } else if (it.key == "schemaVersion") {
    t_.set_env("schema_version", scalar_text(doc));
  } else if (it.key == "baseTimeNanoseconds") {
    std::string s = scalar_text(doc);
    int64_t v;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && p == s.data() + s.size()) {
      base_ns_ = v;
      have_base_ = true;
      t_.set_env("base_time_ns", s);
    }
  } else if (it.key == "distributedInfo") {
    od::object obj;
    if (doc.get_object().get(obj)) return;
    for (auto f_res : obj) {
      od::field f;
      if (auto e = std::move(f_res).get(f)) fail(e);
      std::string_view k;
      if (auto e = unescaped_key(f).get(k)) fail(e);
      if (k != "rank" && k != "world_size" && k != "backend") continue;
      std::string key(k);
      od::value v = f.value();
      std::string_view s;
      int64_t i;
      if (v.get_int64().get(i) == simdjson::SUCCESS) t_.set_env(key, std::to_string(i));
      else if (v.get_string().get(s) == simdjson::SUCCESS) t_.set_env(key, s);
    }
  } else if (it.key == "deviceProperties") {
    od::array arr;
    if (doc.get_array().get(arr)) return;
    for (auto el : arr) {
      od::object obj;
      if (el.get_object().get(obj)) break;
      std::string_view name;
      if (obj["name"].get_string().get(name) == simdjson::SUCCESS) t_.set_env("device_name", name);
      break;  // the first device names them all
    }
  }
}

}  // namespace npud::chrome
