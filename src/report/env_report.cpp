// The reports of `npu-doctor env` (cli/env.cpp): text and JSON (docs/env.md).
#include "report/env_report.hpp"

#include <fmt/format.h>

#include "util/escape.hpp"
#include "util/json_writer.hpp"

namespace npud {

void render_env_text(std::ostream& os, const EnvReport& r) {
  auto t = [](std::string_view s) { return terminal_safe(s); };
  const PythonProbe& p = r.python;
  os << "Installed\n";
  if (p.ran) {
    os << fmt::format("  python     {} ({})\n", t(p.python_version), t(p.executable));
    os << fmt::format("  torch      {}\n", p.torch.empty() ? "not installed" : t(p.torch));
    std::string npu = !p.torch_npu.empty() ? t(p.torch_npu)
                      : !p.torch_npu_wheel.empty() ? t(p.torch_npu_wheel) + " (wheel installed; import failed)"
                                                   : "not installed";
    os << fmt::format("  torch_npu  {}\n", npu);
  } else {
    os << fmt::format("  python     {}: {}\n", t(p.command), t(p.error));
  }
  os << fmt::format("  CANN       {}\n", r.cann.found ? t(r.cann.version) + " (" + t(r.cann.source) + ")"
                                                      : "not found under " + t(r.cann.root));
  os << fmt::format("  driver     {}\n", r.driver.found ? t(r.driver.version) + " (" + t(r.driver.source) + ")"
                                                        : "not found under " + t(r.driver.root));
  os << "\nChecks\n";
  for (const auto& c : r.checks) {
    os << fmt::format("  [{}] {}: {}\n", to_string(c.level), c.component, t(c.message));
    if (!c.advice.empty()) os << fmt::format("      -> {}\n", t(c.advice));
  }
  os << "\n"
     << (!r.python.ran     ? "Not checked: the Python could not be asked (see above); nothing is known to be consistent.\n"
         : r.consistent() ? "Consistent: nothing to install.\n"
                          : "Mismatch found: see the advice above.\n");
}

namespace {

void install_json(JsonWriter& w, const char* key, const InstallInfo& i) {
  w.key(key).begin_object();
  w.field("root", i.root).field("found", i.found);
  if (i.found) w.field("version", i.version).field("source", i.source);
  w.key("looked_in").begin_array();
  for (const auto& f : i.looked_in) w.value(f);
  w.end_array().end_object();
}

}  // namespace

void render_env_json(std::ostream& os, const EnvReport& r) {
  JsonWriter w(os);
  const PythonProbe& p = r.python;
  w.begin_object();
  tool_header(w, "env");
  w.field("consistent", r.consistent());
  w.key("python").begin_object();
  w.field("command", p.command).field("ran", p.ran);
  if (!p.ran) w.field("error", p.error);
  w.field("version", p.python_version).field("executable", p.executable);
  w.end_object();
  w.key("torch").begin_object().field("installed", !p.torch.empty()).field("version", p.torch);
  if (!p.torch_error.empty()) w.field("error", p.torch_error);
  w.end_object();
  w.key("torch_npu").begin_object().field("installed", !p.torch_npu.empty() || !p.torch_npu_wheel.empty());
  w.field("version", p.torch_npu).field("wheel", p.torch_npu_wheel);
  if (!p.torch_npu_error.empty()) w.field("error", p.torch_npu_error);
  w.field("knowledge_version", r.torch_npu_version);  // what analyses use by default here
  w.end_object();
  install_json(w, "cann", r.cann);
  install_json(w, "driver", r.driver);
  w.key("checks").begin_array();
  for (const auto& c : r.checks) {
    w.begin_object().field("level", to_string(c.level)).field("component", c.component).field("message", c.message);
    if (!c.advice.empty()) w.field("advice", c.advice);
    w.end_object();
  }
  w.end_array().end_object();
  os << "\n";
}

}  // namespace npud
