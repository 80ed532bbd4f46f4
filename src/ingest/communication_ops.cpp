#include "ingest/communication_ops.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <cmath>

#include <simdjson.h>

#include "ingest/communication_json.hpp"
#include "ingest/hccl_tasks.hpp"
#include "util/input_error.hpp"
#include "ingest/json_error_at.hpp"
#include "util/text.hpp"

namespace npud {

namespace dom = simdjson::dom;

namespace {

// A finite, non-negative number under `key`, else 0 (msprof writes 0 for "no traffic").
double number(dom::object obj, std::string_view key) {
  double v = 0;
  if (obj[key].get_double().get(v) != simdjson::SUCCESS) {
    int64_t i = 0;
    if (obj[key].get_int64().get(i) != simdjson::SUCCESS) return 0;
    v = double(i);
  }
  return std::isfinite(v) && v >= 0 && v < 1e17 ? v : 0;  // µs timestamps are ~1.7e15
}

// "0.003072" (a Size Distribution key) -> 0.003072; 0 when not a number.
double key_number(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && std::isfinite(v) ? v : 0;
}

struct OpKey {
  std::string_view name, group;
};
OpKey split_op_key(std::string_view key) {
  size_t at = key.rfind('@');
  if (at == key.npos) return {key, {}};
  return {key.substr(0, at), key.substr(at + 1)};
}

void add_transports(dom::object info, CommOp& op, Trace& t) {
  op.transports_begin = uint32_t(t.comm_transports.size());
  dom::object bw;
  if (!info["Communication Bandwidth Info"].get_object().get(bw))
    for (auto [type, el] : bw) {
      dom::object o;
      if (el.get_object().get(o)) continue;
      CommTransport tr;
      tr.type = t.intern(type);
      tr.size_mb = number(o, "Transit Size(MB)");
      tr.time_ms = number(o, "Transit Time(ms)");
      tr.bandwidth_gbs = number(o, "Bandwidth(GB/s)");
      tr.large_packet_ratio = number(o, "Large Packet Ratio");
      tr.sizes_begin = uint32_t(t.comm_packet_sizes.size());
      dom::object dist;
      if (!o["Size Distribution"].get_object().get(dist))
        for (auto [size_key, pair_el] : dist) {
          dom::array pair;
          if (pair_el.get_array().get(pair)) continue;
          CommPacketSize ps;
          ps.size_mb = key_number(size_key);
          size_t i = 0;
          for (dom::element v : pair) {
            double d = 0;
            if (v.get_double().get(d) != simdjson::SUCCESS) {
              int64_t n = 0;
              if (v.get_int64().get(n) == simdjson::SUCCESS) d = double(n);
            }
            if (i == 0) ps.count = int64_t(d);
            else if (i == 1) ps.time_ms = d;
            ++i;
          }
          t.comm_packet_sizes.push_back(ps);
        }
      tr.sizes_count = uint32_t(t.comm_packet_sizes.size() - tr.sizes_begin);
      t.comm_transports.push_back(tr);
    }
  op.transports_count = uint32_t(t.comm_transports.size() - op.transports_begin);
}

// One op record ("Communication Time Info" + "Communication Bandwidth Info").
void add_op(dom::element info_el, CommOp op, Trace& t, int64_t origin_ns) {
  dom::object info;
  if (info_el.get_object().get(info)) return;
  dom::object time;
  if (!info["Communication Time Info"].get_object().get(time)) {
    op.elapse_ms = number(time, "Elapse Time(ms)");
    op.transit_ms = number(time, "Transit Time(ms)");
    op.wait_ms = number(time, "Wait Time(ms)");
    double start_us = number(time, "Start Timestamp(us)");
    if (start_us > 0) {  // whole µs and the fraction apart: µs x 1000 would pass 2^53 and round
      double whole = std::floor(start_us);
      op.start_ns = int64_t(whole) * 1000 + int64_t(std::llround((start_us - whole) * 1000.0)) - origin_ns;
    }
  }
  add_transports(info, op, t);
  t.comm_ops.push_back(op);
}

dom::object root_object(dom::parser& parser, const std::string& path, simdjson::padded_string& text,
                        std::string_view layout) {
  dom::element root = load_json_or_throw(parser, path, text);
  dom::object obj;
  if (root.get_object().get(obj)) throw InputError(path, 0, std::string("expected an object: ") + std::string(layout), false);
  return obj;
}

}  // namespace

bool is_comm_summary_key(std::string_view op_key) {
  std::string_view name = split_op_key(op_key).name;
  return name == "Total Op Info" || name.starts_with("total") || name.find("-top") != name.npos ||
         name.find("-middle") != name.npos || name.find("-bottom") != name.npos;
}

void for_each_rank_op(dom::object steps, const RankOpVisitor& fn) {
  for (auto [step_key, kinds_el] : steps) {
    dom::object kinds;
    if (kinds_el.get_object().get(kinds)) continue;
    for (auto [kind, ops_el] : kinds) {  // "collective", "p2p"
      dom::object ops;
      if (ops_el.get_object().get(ops)) continue;
      for (auto [key, value] : ops)
        if (!is_comm_summary_key(key)) fn(step_key, kind, key, value);
    }
  }
}

void for_each_cluster_record(dom::object groups, const ClusterRecordVisitor& fn) {
  for (auto [group, steps_el] : groups) {
    dom::object steps;
    if (steps_el.get_object().get(steps)) continue;
    for (auto [step_key, ops_el] : steps) {
      dom::object ops;
      if (ops_el.get_object().get(ops)) continue;
      for (auto [key, ranks_el] : ops) {
        dom::object ranks;
        if (is_comm_summary_key(key) || ranks_el.get_object().get(ranks)) continue;
        for (auto [rank_key, info] : ranks) {
          auto rank = parse_int(rank_key);
          if (rank && *rank >= 0 && *rank <= (int64_t(1) << 30)) fn(group, step_key, key, *rank, info);
        }
      }
    }
  }
}

void read_rank_comm_ops(const std::string& path, Trace& trace, int64_t origin_ns) {
  dom::parser parser;
  simdjson::padded_string text;
  dom::object steps = root_object(parser, path, text, "steps (msprof communication.json)");
  for_each_rank_op(steps, [&](std::string_view step_key, std::string_view kind, std::string_view key, dom::element info) {
    CommOp op;
    OpKey k = split_op_key(key);
    op.name = trace.intern(k.name);
    op.group = trace.intern(k.group);
    op.p2p = kind == "p2p";
    op.step_number = comm_step_number(step_key);
    add_op(info, op, trace, origin_ns);
  });
}

void read_comm_matrix(const std::string& path, Trace& trace) {
  dom::parser parser;
  simdjson::padded_string text;
  dom::object steps = root_object(parser, path, text, "steps (msprof communication_matrix.json)");
  for_each_rank_op(steps, [&](std::string_view step_key, std::string_view, std::string_view key, dom::element links_el) {
    dom::object links;
    if (links_el.get_object().get(links)) return;
    OpKey k = split_op_key(key);
    for (auto [pair, link_el] : links) {
      dom::object o;
      size_t dash = pair.find('-');
      if (link_el.get_object().get(o) || dash == pair.npos) continue;
      CommLink l;
      l.op = trace.intern(k.name);
      l.group = trace.intern(k.group);
      l.step_number = comm_step_number(step_key);
      l.src = int32_t(parse_int(pair.substr(0, dash)).value_or(-1));
      l.dst = int32_t(parse_int(pair.substr(dash + 1)).value_or(-1));
      std::string_view transport;
      if (o["Transport Type"].get_string().get(transport) == simdjson::SUCCESS) l.transport = trace.intern(transport);
      l.size_mb = number(o, "Transit Size(MB)");
      l.time_ms = number(o, "Transit Time(ms)");
      l.bandwidth_gbs = number(o, "Bandwidth(GB/s)");
      trace.comm_links.push_back(l);
    }
  });
}

void read_cluster_comm_ops(const std::string& path, Trace& trace) {
  dom::parser parser;
  simdjson::padded_string text;
  dom::object groups = root_object(parser, path, text, "communication groups (cluster_communication.json)");
  for_each_cluster_record(groups, [&](std::string_view group, std::string_view step_key, std::string_view key,
                                      int64_t rank, dom::element info) {
    CommOp op;
    op.name = trace.intern(split_op_key(key).name);
    op.group = trace.intern(group);
    op.rank = int32_t(rank);
    op.step_number = comm_step_number(step_key);
    add_op(info, op, trace, 0);
  });
}

void read_communication_detail(const std::string& dir, bool has_trace_view, Trace& trace) {
  namespace fs = std::filesystem;
  auto present = [&](const char* name) {
    std::error_code ec;
    return fs::is_regular_file(fs::path(dir) / name, ec);
  };
  auto file = [&](const char* name) { return (fs::path(dir) / name).string(); };
  if (present("communication.json")) read_rank_comm_ops(file("communication.json"), trace, trace.time_origin_ns);
  // The matrix and the HCCL tasks only add detail: a file that cannot be read is a warning, not
  // the end of the analysis (trace_view.json may be a truncated file the main reader accepted).
  auto optional = [&](auto&& read) {
    try {
      read();
    } catch (const InputError& e) {
      trace.warnings.push_back({e.describe() + " (HCCL detail left out)", 0});
    }
  };
  if (present("communication_matrix.json")) optional([&] { read_comm_matrix(file("communication_matrix.json"), trace); });
  bool communicated = !trace.comm_ops.empty() || std::any_of(trace.kernels.begin(), trace.kernels.end(), [](const Kernel& k) {
                        return k.kind == TaskKind::Communication;
                      });
  if (has_trace_view && communicated && present("trace_view.json"))  // appends only once the whole file is read
    optional([&] { read_hccl_tasks(file("trace_view.json"), trace); });
}

}  // namespace npud
