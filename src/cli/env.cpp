// `npu-doctor env`: reports the installed Python, torch, torch_npu, CANN and driver, and
// checks them against the knowledge base's compatibility table. See docs/env.md.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "env/env_probe.hpp"
#include "knowledge/knowledge.hpp"
#include "report/escape.hpp"
#include "report/json_writer.hpp"

namespace npud {
namespace {

struct EnvOptions {
  std::string python = "python3";
  std::string cann_home;          // empty = default_cann_home()
  std::string driver_home = "/usr/local/Ascend/driver";
  std::string format = "text";
  std::string output;
  int timeout_s = 60;
};

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

void install_json(JsonWriter& w, const char* key, const InstallInfo& i) {
  w.key(key).begin_object();
  w.field("root", i.root).field("found", i.found);
  if (i.found) w.field("version", i.version).field("source", i.source);
  w.key("looked_in").begin_array();
  for (const auto& f : i.looked_in) w.value(f);
  w.end_array().end_object();
}

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

int env_command(const EnvOptions& o) {
  EnvReport r;
  r.python = probe_python(o.python, o.timeout_s);
  r.cann = read_cann(o.cann_home.empty() ? default_cann_home() : o.cann_home);
  r.driver = read_driver(o.driver_home);
  check_env(r, Knowledge::builtin());
  bool written = emit_report(o.output, false, [&](std::ostream& os, bool) {
    if (o.format == "json") render_env_json(os, r);
    else render_env_text(os, r);
  });
  if (!written) return kExitBadInput;
  if (!r.python.ran) return kExitBadInput;   // never "consistent" about a Python that did not answer
  return r.consistent() ? kExitClean : kExitFindings;
}

}  // namespace

void add_env_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("env", "Show the installed Python, torch, torch_npu, CANN and Ascend driver, and "
                                        "check them against the compatibility table (works without torch_npu)");
  auto o = std::make_shared<EnvOptions>();
  cmd->add_option("--python", o->python, "the Python that runs your training")->capture_default_str();
  cmd->add_option("--cann-home", o->cann_home,
                  "CANN toolkit directory (default: $ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH, "
                  "/usr/local/Ascend/ascend-toolkit/latest)");
  cmd->add_option("--driver-home", o->driver_home, "Ascend driver directory")->capture_default_str();
  cmd->add_option("--format", o->format, "output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  add_output_option(*cmd, o->output, &o->format);
  cmd->add_option("--timeout", o->timeout_s, "seconds to wait for Python to answer")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->footer("Exit codes: 0 consistent, 1 mismatch found (the output says what to install), 2 usage, or the "
              "Python could not be run or did not answer.");
  cmd->callback([o, &exit_code] { exit_code = env_command(*o); });
}

}  // namespace npud
