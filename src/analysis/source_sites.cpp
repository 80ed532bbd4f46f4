#include "analysis/source_sites.hpp"

#include <fmt/format.h>

namespace npud {

namespace {

// Libraries whose files Kineto names relative to sys.path: the first part of such a path.
constexpr std::string_view kKnownPackages[] = {
    "transformers", "accelerate", "timm", "datasets", "tokenizers", "safetensors", "huggingface_hub", "peft", "trl",
    "deepspeed", "apex", "megatron", "lightning", "pytorch_lightning", "torchvision", "torchaudio", "diffusers",
    "einops", "numpy", "scipy", "sklearn", "pandas", "torch_npu", "triton", "mindspeed"};

}  // namespace

std::pair<std::string_view, std::string_view> package_of_path(std::string_view path) {
  for (std::string_view marker : {std::string_view("/site-packages/"), std::string_view("/dist-packages/")}) {
    size_t i = path.rfind(marker);
    if (i == std::string_view::npos) continue;
    std::string_view rest = path.substr(i + marker.size());
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {   // a single-module package: "six.py"
      std::string_view name = rest.substr(0, rest.find('.'));
      return {name, rest};
    }
    return {rest.substr(0, slash), rest.substr(slash + 1)};
  }
  if (!path.empty() && path.front() != '/' && path.front() != '<') {
    size_t slash = path.find('/');
    if (slash != std::string_view::npos)
      for (std::string_view p : kKnownPackages)
        if (path.substr(0, slash) == p) return {p, path.substr(slash + 1)};
  }
  return {};
}

std::string PackageSite::describe() const {
  std::string out = package;
  if (!version.empty()) out += " " + version;
  out += fmt::format(", {}:{}", file, line);
  if (!function.empty() && function != "<module>") out += fmt::format(" ({})", function);
  return out;
}

SourceSites::SourceSites(const Trace& t) : t_(t) {}

const SourceSites::Where& SourceSites::classify(StrId file) const {
  auto it = cache_.find(file);
  if (it != cache_.end()) return it->second;
  auto [package, inside] = package_of_path(t_.str(file));
  return cache_.emplace(file, Where{std::string(package), std::string(inside)}).first->second;
}

bool SourceSites::is_package(StrId file) const { return !classify(file).package.empty(); }

PackageSite SourceSites::site(const Frame& f) const {
  const Where& w = classify(f.file);
  PackageSite s;
  if (w.package.empty()) return s;
  s.package = w.package;
  s.file = w.file;
  s.line = f.line;
  s.function = std::string(t_.str(f.function));
  s.version = std::string(t_.env_value("package:" + w.package));
  return s;
}

}  // namespace npud
