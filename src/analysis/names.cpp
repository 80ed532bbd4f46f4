#include "analysis/names.hpp"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace npud {

std::string_view strip_aten(std::string_view op) {
  if (op.starts_with("aten::")) op.remove_prefix(6);
  return op;
}

bool is_aten_name(std::string_view op) { return op.starts_with("aten::"); }

std::string_view aten_base(std::string_view op) {
  op = strip_aten(op);
  auto dot = op.find('.');
  return dot == std::string_view::npos ? op : op.substr(0, dot);
}

std::string normalize_task_name(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  size_t digits = name.size() - end;
  if (digits == 0 || end == 0) return std::string(name);
  // A single digit after a letter is part of the op type ("MatMulV2", "Conv3"); an instance
  // number has several digits ("ApplyAdamW179") or follows '_' ("trans_Cast_5").
  if (digits == 1 && name[end - 1] != '_') return std::string(name);
  while (end > 0 && name[end - 1] == '_') --end;   // "hcom_broadcast__445"
  return end == 0 ? std::string(name) : std::string(name.substr(0, end));
}

namespace {
// Three significant digits without exponent: 1.23, 12.3, 123.
std::string three_digits(double v) {
  double a = std::fabs(v);
  if (a < 9.995) return fmt::format("{:.2f}", v);
  if (a < 99.95) return fmt::format("{:.1f}", v);
  return fmt::format("{:.0f}", v);
}
}  // namespace

std::string cut_name(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
  return std::string(s.substr(0, cut)) + "...";
}

std::string format_duration(int64_t ns) {
  double v = double(ns);
  double a = std::fabs(v);
  if (a >= 999.5e6) return three_digits(v / 1e9) + " s";
  if (a >= 999.5e3) return three_digits(v / 1e6) + " ms";
  if (a >= 1e3) return three_digits(v / 1e3) + " us";
  return fmt::format("{} ns", ns);
}

std::string format_bytes(double b) {
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (b >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.0f} B", b);
}

std::string format_share(double share) {
  double pct = share * 100;
  if (pct == 0) return "0%";
  if (std::fabs(pct) >= 0.1) return fmt::format("{:.1f}%", pct);
  return fmt::format("{:.2g}%", pct);
}

std::string format_number(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{}", int64_t(std::llround(v)));
  if (std::fabs(v) >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

std::string_view attribute_value(std::string_view text, std::string_view key) {
  for (size_t at = 0; (at = text.find(key, at)) != std::string_view::npos; at += key.size()) {
    if ((at > 0 && text[at - 1] != ' ') || at + key.size() >= text.size() || text[at + key.size()] != '=') continue;
    std::string_view v = text.substr(at + key.size() + 1);
    return v.substr(0, v.find(' '));
  }
  return {};
}

}  // namespace npud
