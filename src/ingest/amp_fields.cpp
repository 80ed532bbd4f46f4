#include "ingest/amp_fields.hpp"
#include "ingest/json_key.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "util/input_error.hpp"

namespace npud {

namespace od = simdjson::ondemand;

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view shown(std::string_view raw) { return raw.substr(0, 40); }

}  // namespace

void AmpFieldReader::fail(std::string_view at, const std::string& msg) const {
  uint64_t rel = at.data() >= data_ ? uint64_t(at.data() - data_) : 0;
  throw InputError(file_, offset_ + rel, fmt::format("event #{}: {}", index_, msg));
}

int64_t AmpFieldReader::count(std::string_view raw, std::string_view what) const {
  raw = trimmed(raw);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
  if (ec != std::errc() || p != raw.data() + raw.size()) {
    double d = 0;  // 4096.0 is a count too
    auto [q, ec2] = std::from_chars(raw.data(), raw.data() + raw.size(), d);
    if (ec2 != std::errc() || q != raw.data() + raw.size() || !std::isfinite(d) || d != std::floor(d) ||
        std::fabs(d) > 9e18)
      fail(raw, fmt::format("amp-check \"{}\" is not an integer: {}", what, shown(raw)));
    v = int64_t(d);
  }
  if (v < 0) fail(raw, fmt::format("amp-check \"{}\" is negative: {}", what, shown(raw)));
  return v;
}

double AmpFieldReader::number(std::string_view raw, std::string_view what, bool allow_null) const {
  raw = trimmed(raw);
  if (raw == "null") {
    if (allow_null) return std::numeric_limits<double>::quiet_NaN();
    fail(raw, fmt::format("amp-check \"{}\" is null", what));
  }
  double d = 0;
  auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), d);
  if (raw.empty() || ec != std::errc() || p != raw.data() + raw.size())
    fail(raw, fmt::format("amp-check \"{}\" is not a number: {}", what, shown(raw)));
  return d;
}

bool AmpFieldReader::boolean(std::string_view raw, std::string_view what) const {
  raw = trimmed(raw);
  if (raw == "true") return true;
  if (raw == "false") return false;
  fail(raw, fmt::format("amp-check \"{}\" is not true or false: {}", what, shown(raw)));
}

std::string_view AmpFieldReader::string(std::string_view raw, std::string_view what) {
  raw = trimmed(raw);
  od::document doc;
  std::string_view s;
  if (raw.empty() || raw.front() != '"' ||
      parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_string().get(s) != simdjson::SUCCESS)
    fail(raw, fmt::format("amp-check \"{}\" is not a string: {}", what, shown(raw)));
  scratch_.assign(s);
  return scratch_;
}

void AmpFieldReader::metrics(od::value v, std::string_view what, TensorMetrics& m) const {
  od::object obj;
  std::string_view token = v.raw_json_token();
  if (v.get_object().get(obj) != simdjson::SUCCESS) fail(token, fmt::format("amp-check \"{}\" is not an object", what));
  for (auto f_res : obj) {
    od::field f;
    std::string_view key;
    if (std::move(f_res).get(f) || unescaped_key(f).get(key)) fail(token, fmt::format("invalid JSON in \"{}\"", what));
    od::value x = f.value();
    std::string_view raw = x.raw_json_token();
    std::string name = fmt::format("{}.{}", what, key);
    if (key == "n") m.n = count(raw, name);
    else if (key == "finite") m.finite = count(raw, name);
    else if (key == "nan_ref") m.nan_ref = count(raw, name);
    else if (key == "nan") m.nan = count(raw, name);
    else if (key == "inf_ref") m.inf_ref = count(raw, name);
    else if (key == "inf") m.inf = count(raw, name);
    else if (key == "overflow") m.overflow = count(raw, name);
    else if (key == "underflow") m.underflow = count(raw, name);
    else if (key == "cos") {
      m.cos = number(raw, name, true);
      if (m.cos == m.cos && std::fabs(m.cos) > 1.0 + 1e-6)
        fail(raw, fmt::format("amp-check \"{}\" is outside [-1, 1]: {}", name, shown(trimmed(raw))));
    } else if (key == "max_abs" || key == "max_rel" || key == "rmse" || key == "gt_1e3" || key == "gt_5e3") {
      double d = number(raw, name, true);
      if (d != d) d = 0;  // null: nothing finite to measure
      if (d < 0) fail(raw, fmt::format("amp-check \"{}\" is negative: {}", name, shown(trimmed(raw))));
      if ((key == "gt_1e3" || key == "gt_5e3") && d > 1.0 + 1e-9)
        fail(raw, fmt::format("amp-check \"{}\" is a share and exceeds 1: {}", name, shown(trimmed(raw))));
      if (key == "max_abs") m.max_abs = d;
      else if (key == "max_rel") m.max_rel = d;
      else if (key == "rmse") m.rmse = d;
      else if (key == "gt_1e3") m.gt_1e3 = d;
      else m.gt_5e3 = d;
    }
    // unknown keys: later versions may add metrics
  }
}

void AmpFieldReader::numeric(std::string_view raw, Trace& t, OpNumeric& out) {
  od::document doc;
  od::object obj;
  if (raw.empty() || raw.front() != '{' ||
      parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS)
    fail(raw, "amp-check \"numeric\" is not an object");
  for (auto f_res : obj) {
    od::field f;
    std::string_view key;
    if (std::move(f_res).get(f) || unescaped_key(f).get(key)) fail(raw, "invalid JSON in \"numeric\"");
    od::value v = f.value();
    std::string_view token = v.raw_json_token();
    if (key == "lowp") out.lowp = boolean(token, "numeric.lowp");
    else if (key == "autocast") out.in_autocast = boolean(token, "numeric.autocast");
    else if (key == "dtype") {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) fail(token, "amp-check \"numeric.dtype\" is not a string");
      out.dtype = t.intern(s);
    } else if (key == "out" || key == "arg") {
      int64_t n = count(token, "numeric.out");
      out.out_arg = int32_t(std::min<int64_t>(n, 1 << 20));
    } else if (key == "ref") {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) fail(token, "amp-check \"numeric.ref\" is not a string");
      out.reference = t.intern(s);
    } else if (key == "calls") {
      out.calls = uint32_t(std::clamp<int64_t>(count(token, "numeric.calls"), 1, int64_t(1) << 30));
    } else if (key == "local") {
      metrics(v, "numeric.local", out.local);
      out.has_local = true;
    } else if (key == "drift") {
      metrics(v, "numeric.drift", out.drift);
      out.has_drift = true;
    }
  }
}

void AmpFieldReader::grad_histogram(const EventFields& ev, Trace& t, GradHistogram& g) {
  const auto& a = ev.amp;
  if (!a[kAmpParams].empty()) g.params = count(a[kAmpParams], "params");
  if (!a[kAmpElements].empty()) g.elements = count(a[kAmpElements], "elements");
  if (!a[kAmpZero].empty()) g.zero = count(a[kAmpZero], "zero");
  if (!a[kAmpNonfinite].empty()) g.nonfinite = count(a[kAmpNonfinite], "nonfinite");
  if (!a[kAmpUnderflow].empty()) g.underflow_fp16 = count(a[kAmpUnderflow], "underflow_fp16");
  if (!a[kAmpOverflow].empty()) g.overflow_fp16 = count(a[kAmpOverflow], "overflow_fp16");
  if (!a[kAmpScaled].empty()) g.scaled = boolean(a[kAmpScaled], "scaled");
  if (!a[kAmpLossScale].empty()) {
    g.loss_scale = number(a[kAmpLossScale], "loss_scale", true);
    if (g.loss_scale == g.loss_scale && !(g.loss_scale > 0))
      fail(a[kAmpLossScale], fmt::format("amp-check \"loss_scale\" is not positive: {}", shown(trimmed(a[kAmpLossScale]))));
  }
  if (!a[kAmpLog2Min].empty()) {
    std::string_view raw = trimmed(a[kAmpLog2Min]);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
    if (ec != std::errc() || p != raw.data() + raw.size() || v < -1100 || v > 1100)
      fail(raw, fmt::format("amp-check \"log2_min\" is not an exponent: {}", shown(raw)));
    g.log2_min = int32_t(v);
  }
  g.step_number = ev.step;
  g.ts_ns = ev.ts_ns;
  g.bins_begin = uint32_t(t.grad_bins.size());
  std::string_view raw = a[kAmpLog2Hist];
  if (!raw.empty()) {
    od::document doc;
    od::array arr;
    if (raw.front() != '[' ||
        parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
                .get(doc) != simdjson::SUCCESS ||
        doc.get_array().get(arr) != simdjson::SUCCESS)
      fail(raw, "amp-check \"log2_hist\" is not an array");
    for (auto x_res : arr) {
      od::value x;
      if (std::move(x_res).get(x)) fail(raw, "invalid JSON in \"log2_hist\"");
      if (t.grad_bins.size() - g.bins_begin >= 4096) fail(raw, "amp-check \"log2_hist\" has more than 4096 buckets");
      t.grad_bins.push_back(count(x.raw_json_token(), "log2_hist"));
    }
  }
  g.bins_count = uint32_t(t.grad_bins.size() - g.bins_begin);
}

void AmpFieldReader::amp_call(const EventFields& ev, Trace& t, AmpCall& c) {
  if (!ev.amp[kAmpScale].empty()) c.scale = number(ev.amp[kAmpScale], "scale", true);
  if (!ev.amp[kAmpDtype].empty()) c.dtype = t.intern(string(ev.amp[kAmpDtype], "dtype"));
}

void AmpFieldReader::header(const EventFields& ev, Trace& t) {
  if (!ev.amp[kAmpMode].empty()) t.set_env("mode", string(ev.amp[kAmpMode], "mode"));
  std::string_view raw = ev.amp[kAmpHeader];
  if (raw.empty()) return;
  od::document doc;
  od::object obj;
  if (raw.front() != '{' ||
      parser_.iterate(simdjson::padded_string_view(raw.data(), raw.size(), raw.size() + simdjson::SIMDJSON_PADDING))
              .get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(obj) != simdjson::SUCCESS)
    fail(raw, "amp-check header \"amp\" is not an object");
  for (auto f_res : obj) {
    od::field f;
    std::string_view key;
    if (std::move(f_res).get(f) || unescaped_key(f).get(key)) fail(raw, "invalid JSON in the header's \"amp\"");
    od::value v = f.value();
    std::string_view token = v.raw_json_token();
    if (key == "emulated") {
      t.set_env("amp_emulated", boolean(token, "amp.emulated") ? "true" : "false");
      continue;
    }
    if (key != "dtype" && key != "level" && key != "metric_dtype" && key != "lists") continue;
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) fail(token, fmt::format("amp-check \"amp.{}\" is not a string", key));
    t.set_env(fmt::format("amp_{}", key), s);
  }
}

}  // namespace npud
