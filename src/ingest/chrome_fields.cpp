#include "ingest/chrome_fields.hpp"
#include "ingest/json_key.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "ingest/decimal_time.hpp"
#include "util/input_error.hpp"
#include "ingest/limits.hpp"

namespace npud {

namespace od = simdjson::ondemand;

void EventFields::reset() {
  ph = 0;
  cat = name = {};
  has_cat = false;
  pid = tid = 0;
  pid_str = tid_str = {};
  ts_ns = dur_ns = 0;
  has_ts = has_dur = false;
  flow_id = -1;
  external_id = correlation = sequence = bytes = device = stream = -1;
  step = total_allocated = total_reserved = -1;
  mem_bytes = 0;
  has_mem_bytes = false;
  mhz = -1;
  sync_kind = task_type = call_stack = module = reason = message = arg_name = copy_kind = {};
  pg_name = pg_ranks = {};
  stack_raw = {};
  bwd = {};
  has_bwd = false;
  dims.clear();
  strides.clear();
  types.clear();
  has_types = false;
  inputs.clear();
  outputs.clear();
  tensor_ints.clear();
  has_inputs = has_outputs = false;
  format = torch = python = device_str = torch_npu = steps = {};
  capture_version = capture_rank = capture_world_size = -1;
  op = thread = where = dispatch = cwd = packages_raw = facts_raw = compile_raw = {};
  steps_completed = -1;
  cpu_kernel = expanded = false;
  argv.clear();
  if (has_amp) {
    for (auto& a : amp) a = {};
    has_amp = false;
  }
}

namespace {

struct Ctx {
  const char* data;
  size_t len;
  uint64_t offset;
  uint64_t index;
  const std::string& file;
  od::document& doc;

  [[noreturn]] void fail_at(const char* where, const std::string& msg) const {
    uint64_t rel = (where && where >= data && where <= data + len) ? uint64_t(where - data) : 0;
    throw InputError(file, offset + rel, fmt::format("event #{}: {}", index, msg));
  }
  // simdjson reported a structural problem: point at where it stopped.
  [[noreturn]] void fail_json(simdjson::error_code e) const {
    const char* where = nullptr;
    if (doc.current_location().get(where) != simdjson::SUCCESS) where = nullptr;
    fail_at(where, fmt::format("invalid JSON ({})", simdjson::error_message(e)));
  }
  template <typename T, typename R>
  void get(R&& r, T& out) const {
    if (auto e = std::forward<R>(r).get(out)) fail_json(e);
  }
};

// Integers in args: lenient (ints, integral floats, digit strings); anything else leaves out as is.
void lenient_int(od::value v, int64_t& out) {
  od::json_type t;
  if (v.type().get(t)) return;
  if (t == od::json_type::number) {
    int64_t i;
    if (v.get_int64().get(i) == simdjson::SUCCESS) {
      out = i;
      return;
    }
    double d;
    if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9.2e18) out = int64_t(d);
  } else if (t == od::json_type::string) {
    std::string_view s;
    if (v.get_string().get(s)) return;
    int64_t i;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
    if (ec == std::errc() && p == s.data() + s.size()) out = i;
  }
}

void lenient_string(od::value v, std::string_view& out) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) out = s;
}

void lenient_bool(od::value v, bool& out) {
  bool b;
  if (v.get_bool().get(b) == simdjson::SUCCESS) out = b;
}

// pid / tid: integers or strings.
void read_id(const Ctx& c, od::value v, std::string_view field, int64_t& num, std::string_view& str) {
  od::json_type t;
  c.get(v.type(), t);
  if (t == od::json_type::string) {
    c.get(v.get_string(), str);
    return;
  }
  std::string_view raw = v.raw_json_token();
  if (t != od::json_type::number) c.fail_at(raw.data(), fmt::format("\"{}\" is neither a number nor a string", field));
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    num = i;
    return;
  }
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9.2e18 && d == std::floor(d)) {
    num = int64_t(d);
    return;
  }
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
    raw.remove_suffix(1);
  c.fail_at(raw.data(), fmt::format("\"{}\" value {} is not an integer in range", field, raw.substr(0, 40)));
}

// ts / dur: microseconds as a number or a string, converted exactly to ns.
void read_time(const Ctx& c, od::value v, std::string_view field, int64_t& out) {
  od::json_type t;
  c.get(v.type(), t);
  std::string_view text;
  const char* where = v.raw_json_token().data();
  if (t == od::json_type::number) {
    text = v.raw_json_token();
  } else if (t == od::json_type::string) {
    c.get(v.get_string(), text);
  } else {
    const char* what = t == od::json_type::object  ? "an object"
                       : t == od::json_type::array ? "an array"
                       : t == od::json_type::null  ? "null"
                                                   : "a boolean";
    c.fail_at(where, fmt::format("\"{}\" is not a number (found {})", field, what));
  }
  switch (parse_us_to_ns(text, out)) {
    case DecimalStatus::Ok:
      return;
    case DecimalStatus::OutOfRange:
      c.fail_at(where, fmt::format("\"{}\" value {} is out of range (more than 292 years in ns)", field,
                                   text.substr(0, 40)));
    case DecimalStatus::Invalid:
      break;
  }
  c.fail_at(where, fmt::format("\"{}\" is not a number: \"{}\"", field, text.substr(0, 40)));
}

void read_int_list(const Ctx& c, od::array arr, std::vector<int64_t>& ints) {
  for (auto x_res : arr) {
    od::value x;
    c.get(std::move(x_res), x);
    int64_t n = 0;
    lenient_int(x, n);
    ints.push_back(n);
  }
}

void read_nested(const Ctx& c, od::value v, NestedInts& out) {
  od::array arr;
  if (v.get_array().get(arr)) return;
  out.present = true;
  for (auto el_res : arr) {
    od::value el;
    c.get(std::move(el_res), el);
    NestedInts::Entry e;
    od::json_type t;
    c.get(el.type(), t);
    if (t == od::json_type::array) {
      od::array inner;
      c.get(el.get_array(), inner);
      uint32_t ints_begin = uint32_t(out.ints.size()), lists_begin = uint32_t(out.lists.size());
      for (auto x_res : inner) {
        od::value x;
        c.get(std::move(x_res), x);
        od::json_type xt;
        c.get(x.type(), xt);
        if (xt == od::json_type::array) {
          od::array leaf;
          c.get(x.get_array(), leaf);
          NestedInts::Entry le{NestedInts::Entry::Ints, uint32_t(out.ints.size()), 0};
          read_int_list(c, leaf, out.ints);
          le.count = uint32_t(out.ints.size()) - le.begin;
          out.lists.push_back(le);
        } else if (xt == od::json_type::number) {
          int64_t n = 0;
          lenient_int(x, n);
          out.ints.push_back(n);
        } else {
          out.lists.push_back({});  // null etc. inside a list of lists
        }
      }
      if (out.lists.size() > lists_begin) {
        e = {NestedInts::Entry::Lists, lists_begin, uint32_t(out.lists.size()) - lists_begin};
      } else {
        e = {NestedInts::Entry::Ints, ints_begin, uint32_t(out.ints.size()) - ints_begin};
      }
    }
    out.top.push_back(e);
  }
}

// The raw JSON text of a value (objects and arrays whole), for amp keys read later.
void raw_amp(const Ctx& c, od::value v, EventFields& ev, AmpKey k) {
  od::json_type t;
  c.get(v.type(), t);
  std::string_view raw;
  if (t == od::json_type::object) {
    od::object o;
    c.get(v.get_object(), o);
    c.get(o.raw_json(), raw);
  } else if (t == od::json_type::array) {
    od::array a;
    c.get(v.get_array(), a);
    c.get(a.raw_json(), raw);
  } else {
    raw = v.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t'))
      raw.remove_suffix(1);
  }
  ev.amp[k] = raw;
  ev.has_amp = true;
}

void read_capture_tensors(const Ctx& c, od::value v, EventFields& ev, std::vector<CaptureTensor>& out) {
  od::array arr;
  if (v.get_array().get(arr)) return;
  for (auto el_res : arr) {
    od::value el;
    c.get(std::move(el_res), el);
    od::object obj;
    if (el.get_object().get(obj)) continue;
    CaptureTensor t;
    for (auto f_res : obj) {
      od::field f;
      c.get(std::move(f_res), f);
      std::string_view key;
      c.get(unescaped_key(f), key);
      od::value fv = f.value();
      if (key == "id") lenient_int(fv, t.id);
      else if (key == "storage") lenient_int(fv, t.storage);
      else if (key == "offset") lenient_int(fv, t.offset);
      else if (key == "rg") {
        int64_t rg = 0;
        lenient_int(fv, rg);
        t.requires_grad = rg != 0;
      }
      else if (key == "dtype") lenient_string(fv, t.dtype);
      else if (key == "device") lenient_string(fv, t.device);
      else if (key == "layout") lenient_string(fv, t.layout);
      else if (key == "shape" || key == "strides") {
        od::array dims;
        if (fv.get_array().get(dims)) continue;
        uint32_t begin = uint32_t(ev.tensor_ints.size());
        read_int_list(c, dims, ev.tensor_ints);
        uint32_t count = uint32_t(ev.tensor_ints.size()) - begin;
        if (key == "shape") {
          t.shape_begin = begin, t.shape_count = count, t.has_shape = true;
        } else {
          t.strides_begin = begin, t.strides_count = count, t.has_strides = true;
        }
      }
    }
    out.push_back(t);
  }
}

void read_args(const Ctx& c, od::value v, EventFields& ev) {
  od::object args;
  if (v.get_object().get(args)) return;  // null or something else: no args
  for (auto f_res : args) {
    od::field f;
    c.get(std::move(f_res), f);
    std::string_view key;
    c.get(unescaped_key(f), key);
    od::value a = f.value();
    switch (key.size()) {
      case 2:
        if (key == "op") lenient_string(a, ev.op);
        break;
      case 3:
        if (key == "MHz") {
          double d;
          if (a.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && d >= 0) ev.mhz = d;
        } else if (key == "seq") lenient_int(a, ev.sequence);
        else if (key == "cpu") lenient_bool(a, ev.cpu_kernel);
        else if (key == "cwd") lenient_string(a, ev.cwd);
        else if (key == "amp") raw_amp(c, a, ev, kAmpHeader);
        else if (key == "bwd") {
          lenient_string(a, ev.bwd);
          ev.has_bwd = true;
        }
        break;
      case 4:
        if (key == "step") lenient_int(a, ev.step);
        else if (key == "name") lenient_string(a, ev.arg_name);
        else if (key == "kind") lenient_string(a, ev.copy_kind);
        else if (key == "rank") lenient_int(a, ev.capture_rank);
        else if (key == "mode") raw_amp(c, a, ev, kAmpMode);
        else if (key == "zero") raw_amp(c, a, ev, kAmpZero);
        else if (key == "argv") {
          od::array arr;
          if (a.get_array().get(arr)) break;
          for (auto s_res : arr) {
            od::value s;
            c.get(std::move(s_res), s);
            std::string_view sv;
            if (s.get_string().get(sv)) continue;
            if (!ev.argv.empty()) ev.argv.push_back(' ');
            ev.argv.append(sv);
          }
        }
        break;
      case 5:
        if (key == "bytes") lenient_int(a, ev.bytes);
        else if (key == "Bytes") {
          lenient_int(a, ev.mem_bytes);
          ev.has_mem_bytes = true;
        } else if (key == "stack") {
          od::array arr;
          if (a.get_array().get(arr) == simdjson::SUCCESS) c.get(arr.raw_json(), ev.stack_raw);
        } else if (key == "torch") lenient_string(a, ev.torch);
        else if (key == "steps") lenient_string(a, ev.steps);
        else if (key == "facts") {
          od::object obj;
          if (a.get_object().get(obj) == simdjson::SUCCESS) c.get(obj.raw_json(), ev.facts_raw);
        }
        else if (key == "scale") raw_amp(c, a, ev, kAmpScale);
        else if (key == "dtype") raw_amp(c, a, ev, kAmpDtype);
        else if (key == "where") lenient_string(a, ev.where);
        break;
      case 6:
        if (key == "device") {
          od::json_type t;
          c.get(a.type(), t);
          if (t == od::json_type::string) lenient_string(a, ev.device_str);
          else lenient_int(a, ev.device);
        } else if (key == "stream") lenient_int(a, ev.stream);
        else if (key == "module") lenient_string(a, ev.module);
        else if (key == "reason") lenient_string(a, ev.reason);
        else if (key == "format") lenient_string(a, ev.format);
        else if (key == "python") lenient_string(a, ev.python);
        else if (key == "inputs") {
          ev.has_inputs = true;
          read_capture_tensors(c, a, ev, ev.inputs);
        } else if (key == "params") raw_amp(c, a, ev, kAmpParams);
        else if (key == "scaled") raw_amp(c, a, ev, kAmpScaled);
        else if (key == "thread") lenient_string(a, ev.thread);
        break;
      case 7:
        if (key == "message") lenient_string(a, ev.message);
        else if (key == "version") lenient_int(a, ev.capture_version);
        else if (key == "outputs") {
          ev.has_outputs = true;
          read_capture_tensors(c, a, ev, ev.outputs);
        } else if (key == "numeric") raw_amp(c, a, ev, kAmpNumeric);
        else if (key == "compile") {
          od::object obj;
          if (a.get_object().get(obj) == simdjson::SUCCESS) c.get(obj.raw_json(), ev.compile_raw);
        }
        break;
      case 8:
        if (key == "elements") raw_amp(c, a, ev, kAmpElements);
        else if (key == "log2_min") raw_amp(c, a, ev, kAmpLog2Min);
        else if (key == "dispatch") lenient_string(a, ev.dispatch);
        else if (key == "packages") {
          od::object obj;
          if (a.get_object().get(obj) == simdjson::SUCCESS) c.get(obj.raw_json(), ev.packages_raw);
        }
        else if (key == "expanded") lenient_bool(a, ev.expanded);
        break;
      case 9:
        if (key == "Task Type") lenient_string(a, ev.task_type);
        else if (key == "Stream Id") lenient_int(a, ev.stream);
        else if (key == "Device Id") lenient_int(a, ev.device);
        else if (key == "torch_npu") lenient_string(a, ev.torch_npu);
        else if (key == "nonfinite") raw_amp(c, a, ev, kAmpNonfinite);
        else if (key == "log2_hist") raw_amp(c, a, ev, kAmpLog2Hist);
        break;
      case 10:
        if (key == "Input Dims") read_nested(c, a, ev.dims);
        else if (key == "world_size") lenient_int(a, ev.capture_world_size);
        else if (key == "Input type") {
          od::array arr;
          if (a.get_array().get(arr)) break;
          ev.has_types = true;
          for (auto s_res : arr) {
            od::value s;
            c.get(std::move(s_res), s);
            std::string_view sv;
            if (s.get_string().get(sv)) sv = {};
            ev.types.push_back(sv);
          }
        } else if (key == "Call stack") lenient_string(a, ev.call_stack);
        else if (key == "loss_scale") raw_amp(c, a, ev, kAmpLossScale);
        break;
      case 11:
        if (key == "External id") lenient_int(a, ev.external_id);
        else if (key == "correlation") lenient_int(a, ev.correlation);
        break;
      case 13:
        if (key == "Input Strides") read_nested(c, a, ev.strides);
        else if (key == "overflow_fp16") raw_amp(c, a, ev, kAmpOverflow);
        break;
      case 14:
        if (key == "cuda_sync_kind") lenient_string(a, ev.sync_kind);
        else if (key == "Total Reserved") lenient_int(a, ev.total_reserved);
        else if (key == "underflow_fp16") raw_amp(c, a, ev, kAmpUnderflow);
        break;
      case 15:
        if (key == "Sequence number") lenient_int(a, ev.sequence);
        else if (key == "Total Allocated") lenient_int(a, ev.total_allocated);
        else if (key == "steps_completed") lenient_int(a, ev.steps_completed);
        break;
      case 16:
        if (key == "Module Hierarchy") lenient_string(a, ev.module);
        break;
      case 18:
        if (key == "Process Group Name") lenient_string(a, ev.pg_name);
        break;
      case 19:
        if (key == "Process Group Ranks") lenient_string(a, ev.pg_ranks);
        break;
      default:
        break;
    }
  }
}

// Strings the importer keeps (interns) must stay under limits::kMaxStringBytes: a crafted
// event could otherwise hold one 60 MiB name, and a file a million of them.
void check_kept_strings(const Ctx& c, const EventFields& ev) {
  auto check = [&](std::string_view what, std::string_view s) {
    if (s.size() > limits::kMaxStringBytes)
      c.fail_at(s.data(), fmt::format("{} is {} bytes long, over the {} MiB limit for a string", what, s.size(),
                                      limits::kMaxStringBytes >> 20));
  };
  check("\"name\"", ev.name);
  check("\"cat\"", ev.cat);
  check("\"pid\"", ev.pid_str);
  check("\"tid\"", ev.tid_str);
  check("\"Call stack\"", ev.call_stack);
  check("\"stack\"", ev.stack_raw);
  check("\"module\"", ev.module);
  check("\"reason\"", ev.reason);
  check("\"bwd\"", ev.bwd);
  check("\"message\"", ev.message);
  check("\"op\"", ev.op);
  check("\"thread\"", ev.thread);
  check("\"where\"", ev.where);
  check("\"cwd\"", ev.cwd);
  check("\"packages\"", ev.packages_raw);
  check("\"facts\"", ev.facts_raw);
  check("\"compile\"", ev.compile_raw);
  check("\"Task Type\"", ev.task_type);
  check("\"cuda_sync_kind\"", ev.sync_kind);
  check("\"args.name\"", ev.arg_name);
  check("\"Process Group Name\"", ev.pg_name);
  check("\"Process Group Ranks\"", ev.pg_ranks);
  check("\"argv\"", ev.argv);
  for (std::string_view t : ev.types) check("an \"Input type\"", t);
  for (const auto* ts : {&ev.inputs, &ev.outputs})
    for (const CaptureTensor& t : *ts) {
      check("a tensor \"dtype\"", t.dtype);
      check("a tensor \"device\"", t.device);
      check("a tensor \"layout\"", t.layout);
    }
}

}  // namespace

void parse_event(od::parser& parser, const char* data, size_t len, uint64_t offset, uint64_t index,
                 const std::string& file, EventFields& ev) {
  ev.reset();
  od::document doc;
  Ctx c{data, len, offset, index, file, doc};
  if (auto e = parser.iterate(simdjson::padded_string_view(data, len, len + simdjson::SIMDJSON_PADDING)).get(doc))
    c.fail_at(data, fmt::format("invalid JSON ({})", simdjson::error_message(e)));
  od::object obj;
  c.get(doc.get_object(), obj);
  for (auto f_res : obj) {
    od::field f;
    c.get(std::move(f_res), f);
    std::string_view key;
    c.get(unescaped_key(f), key);
    od::value v = f.value();
    switch (key.size()) {
      case 2:
        if (key == "ph") {
          std::string_view s;
          if (v.get_string().get(s) == simdjson::SUCCESS && !s.empty()) ev.ph = s[0];
        } else if (key == "ts") {
          read_time(c, v, "ts", ev.ts_ns);
          ev.has_ts = true;
        } else if (key == "id") {
          // Flow ids: numbers (async_npu) or strings; anything else is not an error here.
          int64_t i;
          std::string_view s;
          if (v.get_int64().get(i) == simdjson::SUCCESS) ev.flow_id = i;
          else if (v.get_string().get(s) == simdjson::SUCCESS) ev.flow_id = parse_int(s).value_or(-1);
        }
        break;
      case 3:
        if (key == "cat") {
          std::string_view s;
          if (v.get_string().get(s) == simdjson::SUCCESS) ev.cat = s, ev.has_cat = true;
        } else if (key == "pid") {
          read_id(c, v, "pid", ev.pid, ev.pid_str);
        } else if (key == "tid") {
          read_id(c, v, "tid", ev.tid, ev.tid_str);
        } else if (key == "dur") {
          read_time(c, v, "dur", ev.dur_ns);
          ev.has_dur = true;
        }
        break;
      case 4:
        if (key == "name") {
          std::string_view s;
          if (v.get_string().get(s) == simdjson::SUCCESS) ev.name = s;
        } else if (key == "args") {
          read_args(c, v, ev);
        }
        break;
      default:
        break;
    }
  }
  check_kept_strings(c, ev);
}

}  // namespace npud
