// The HTML report's precision section for amp-check captures: where drift starts and a
// drift-per-op and drift-per-module chart (inline SVG, no script, like the other charts).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/html_parts.hpp"

namespace npud {
namespace {

// A row's error on a log scale: 1 - cos (worst call, local or drift) from 1e-7 (0) to 1 (7).
double log_error(const DriftRow& r) {
  double err = std::max(1.0 - r.worst_local_cos, 1.0 - r.worst_drift_cos);
  if (r.overflow > 0) err = 1;                                     // Inf: as wrong as it gets
  else if (r.bad_local > 0 || r.bad_drift > 0) err = std::max(err, 1e-3);   // new NaN/Inf: at least the threshold
  return std::clamp(std::log10(std::max(err, 1e-7)) + 7.0, 0.0, 7.0);
}

std::string cell(double c) { return c == c ? fmt::format("{:.4f}", c) : "null"; }

void drift_chart(std::ostream& os, std::string_view id, const std::vector<DriftRow>& rows) {
  constexpr int kLabelW = 300, kBarW = 420, kTextW = 380, kRowH = 20;
  int h = int(rows.size()) * kRowH + 24;
  os << html::svg_open(id, kLabelW + kBarW + kTextW, h);
  for (size_t i = 0; i < rows.size(); ++i) {
    const DriftRow& r = rows[i];
    double y = 5 + double(i) * kRowH;
    double w = kBarW * log_error(r) / 7.0;
    bool bad = r.bad_local > 0 || r.bad_drift > 0 || r.overflow > 0;
    std::string label = r.name.size() > 46 ? r.name.substr(0, 45) + "\xE2\x80\xA6" : r.name;
    // The same two pairs of numbers as the text table: local cos and >5e-3 share, then drift's.
    std::string text = fmt::format("local cos {}, >5e-3 {:.1f}% / drift cos {}, >5e-3 {:.1f}%{}", cell(r.worst_local_cos),
                                   100 * r.local_gt_5e3, cell(r.worst_drift_cos), 100 * r.drift_gt_5e3,
                                   r.overflow ? fmt::format(", overflow {}", r.overflow) : "");
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLabelW - 6, y + 13,
                      html_escape(label));
    os << fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: {} ({} calls, "
                      "{} diverge)</title></rect>",
                      kLabelW, y + 2, std::max(w, 0.5), kRowH - 5, bad ? "#c0504d" : "#4f9a5a",
                      html_escape(shorten(r.name, kMaxTitleBytes)),
                      html_escape(text), r.calls, r.bad_local);
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", kLabelW + kBarW + 6, y + 13, html_escape(text));
  }
  // The docs/metrics.md threshold (1 - cos = 1e-3) on the log axis.
  double tx = kLabelW + kBarW * 4.0 / 7.0;
  double axis = double(rows.size()) * kRowH + 18;
  os << fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"0\" y2=\"{1:.0f}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>",
                    tx, axis - 12);
  for (int e = -7; e <= 0; e += 1)
    if (e % 2 == 1 || e % 2 == -1 || e == 0)
      os << fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">1e{}</text>", kLabelW + kBarW * (e + 7) / 7.0,
                        axis, e);
  os << "\n</svg>\n";
}

}  // namespace

void render_amp_html(std::ostream& os, const AmpSummary& a) {
  const AmpHeader& h = a.header;
  // Folded like every section below the top problems; its summary line says where drift starts.
  std::string gist = a.start.op != kNone ? fmt::format("{} at {}", a.start.gradual ? "drift first crosses the thresholds"
                                                                                   : "drift starts", a.start_place.op)
                     : a.measured > 0    ? std::string("no op crosses the thresholds")
                                         : std::string("nothing measured");
  html::section_begin(os, "amp", "Precision drift (amp-check)", gist);
  os << "<div class=\"panel\" id=\"amp-section\">\n";
  os << "<p>" << html_escape(fmt::format("{} {}{}: {} ops measured, {} in low precision.", h.dtype, h.level,
                                         h.emulated == 1 ? ", emulated on CPU" : h.emulated == 0 ? ", on the device" : "",
                                         a.measured, a.lowp))
     << " " << html_escape(program_numerics(h, a.lowp, a.measured)) << ".</p>\n";
  if (a.start.op != kNone) {
    const AmpPlace& p = a.start_place;
    os << "<p><b>" << html_escape(a.start.gradual ? "Drift first crosses the thresholds at " : "Drift starts at ")
       << html_escape(p.op) << "</b> " << html_escape(p.file.empty() ? "" : fmt::format("{}:{}", p.file, p.line))
       << html_escape(p.module.empty() ? "" : "  module " + p.module)
       << html_escape(fmt::format(" (local cos {}, {:.1f}% beyond 5e-3, overflow {})", cell(a.start_numeric.local.cos),
                                  100 * a.start_numeric.local.gt_5e3, a.start_numeric.local.overflow))
       << "</p>\n";
  } else if (a.measured > 0) {
    os << "<p>No op crosses the thresholds (cos &lt; 0.999 or new NaN/Inf).</p>\n";
  }
  if (!a.by_op.empty()) {
    os << "<p>Error per op, worst call (log scale: 1 &minus; cos; dashed line = threshold; red "
          "= diverges)</p>\n";
    drift_chart(os, "amp-drift-chart", a.by_op);
  }
  if (!a.by_module.empty()) {
    os << "<p>Error per module, worst call</p>\n";
    drift_chart(os, "amp-module-chart", a.by_module);
  }
  if (!a.keep_fp32.empty()) {
    os << "<p>Keep in fp32:</p><ul>\n";
    for (const KeepFp32& k : a.keep_fp32)
      os << "<li>" << html_escape(fmt::format("{}: {} in {}/{} calls (NPU autocast policy: {})", k.op, k.reason,
                                              k.bad_calls, k.calls, k.policy.empty() ? "none" : k.policy))
         << "</li>\n";
    os << "</ul>\n";
  }
  const GradAdvice& g = a.grads;
  if (g.histograms > 0 && g.have_hist && !h.bf16())
    os << "<p>" << html_escape(fmt::format("Gradients: {:.2f}% of nonzero elements below 2^-24 {}; suggested initial "
                                           "loss scale 2^{} = {}.", 100 * g.underflow_share_used,
                                           g.scaled ? "at the scale in use" : "unscaled", g.suggested_log2,
                                           std::ldexp(1.0, g.suggested_log2)))
       << "</p>\n";
  os << "</div>\n";
  html::section_end(os);
}

}  // namespace npud
