#include "ingest/hccl_tasks.hpp"

#include <algorithm>
#include <cmath>

#include <simdjson.h>

#include "ingest/byte_source.hpp"
#include "ingest/decimal_time.hpp"
#include "ingest/json_stream.hpp"

namespace npud {

namespace dom = simdjson::dom;

namespace {

struct RawTask {
  int64_t pid = 0;
  std::string name;
  int64_t start_ns = 0, dur_ns = 0;
  int64_t size = -1;
  std::string transport, link;
};

// A time in µs (JSON number or string) in ns; false when neither.
bool time_ns(simdjson::simdjson_result<dom::element> field, int64_t& out) {
  dom::element el;
  if (field.get(el)) return false;
  std::string_view s;
  if (el.get_string().get(s) == simdjson::SUCCESS) return parse_us_to_ns(s, out) == DecimalStatus::Ok;
  double d = 0;
  if (el.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d) || std::fabs(d) > 9e15) return false;
  out = int64_t(std::llround(d * 1000.0));
  return true;
}

bool integer(simdjson::simdjson_result<dom::element> field, int64_t& out) {
  dom::element el;
  if (field.get(el)) return false;
  if (el.get_int64().get(out) == simdjson::SUCCESS) return true;
  double d = 0;
  if (el.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18) {
    out = int64_t(d);
    return true;
  }
  std::string_view s;
  if (el.get_string().get(s) != simdjson::SUCCESS) return false;
  int64_t ns = 0;  // a decimal string ("1024"): read through the exact parser, in units of 1/1000
  if (parse_us_to_ns(s, ns) != DecimalStatus::Ok) return false;
  out = ns / 1000;
  return true;
}

// Only events that can matter are parsed: process names and the HCCL process's tasks.
bool may_be_hccl(std::string_view ev) {
  return ev.find("process_name") != ev.npos || ev.find("hcom") != ev.npos || ev.find("Memcpy") != ev.npos ||
         ev.find("Reduce") != ev.npos;
}

}  // namespace

void read_hccl_tasks(const std::string& path, Trace& trace) {
  std::unique_ptr<ByteSource> src = open_byte_source(path);
  JsonEventStream stream(*src, path, [](std::string_view) { return false; });
  dom::parser parser;
  int64_t first_hccl_pid = -1;
  std::vector<RawTask> raw;
  JsonEventStream::Item it;
  while (stream.next(it)) {
    if (it.kind != JsonEventStream::Item::Kind::Event) continue;
    std::string_view text(it.data, it.len);
    if (!may_be_hccl(text)) continue;
    dom::element ev;
    if (parser.parse(it.data, it.len, false).get(ev)) continue;
    dom::object obj;
    if (ev.get_object().get(obj)) continue;
    std::string_view name, ph;
    int64_t pid = 0;
    if (obj["name"].get_string().get(name) || !integer(obj["pid"], pid)) continue;
    if (obj["ph"].get_string().get(ph)) ph = {};
    dom::object args;
    bool has_args = obj["args"].get_object().get(args) == simdjson::SUCCESS;
    if (name == "process_name") {
      std::string_view pname;
      if (has_args && args["name"].get_string().get(pname) == simdjson::SUCCESS &&
          (pname == "HCCL" || pname == "Communication") && first_hccl_pid < 0)
        first_hccl_pid = pid;  // the advisor takes the first such process
      continue;
    }
    if (ph != "X") continue;
    RawTask r;
    r.pid = pid;
    r.name = std::string(name);
    if (!time_ns(obj["ts"], r.start_ns)) continue;
    if (!time_ns(obj["dur"], r.dur_ns) || r.dur_ns < 0) r.dur_ns = 0;
    if (has_args) {
      int64_t size = 0;
      if (integer(args["size(Byte)"], size)) r.size = size;
      std::string_view s;
      if (args["transport type"].get_string().get(s) == simdjson::SUCCESS) r.transport = std::string(s);
      if (args["link type"].get_string().get(s) == simdjson::SUCCESS) r.link = std::string(s);
    }
    raw.push_back(std::move(r));
  }
  if (first_hccl_pid < 0) return;
  std::erase_if(raw, [&](const RawTask& r) { return r.pid != first_hccl_pid; });
  std::stable_sort(raw.begin(), raw.end(), [](const RawTask& a, const RawTask& b) { return a.start_ns < b.start_ns; });
  uint32_t current = kNone;
  for (const RawTask& r : raw) {
    std::string_view prefix = std::string_view(r.name).substr(0, r.name.find('_'));
    bool op = prefix == "hcom";
    if (!op && prefix != "Memcpy" && prefix != "Reduce") continue;
    if (!op && current == kNone) continue;  // a task before any op belongs to none
    HcclTask t;
    t.name = trace.intern(r.name);
    t.op = op ? kNone : current;
    t.start_ns = r.start_ns - trace.time_origin_ns;
    t.dur_ns = r.dur_ns;
    t.size_bytes = r.size;
    if (!r.transport.empty()) t.transport = trace.intern(r.transport);
    if (!r.link.empty()) t.link = trace.intern(r.link);
    if (op) current = uint32_t(trace.hccl_tasks.size());
    trace.hccl_tasks.push_back(t);
  }
}

}  // namespace npud
