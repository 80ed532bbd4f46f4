#include "model/package_path.hpp"

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

bool is_torch_file(std::string_view path) {
  // "torch/nn/modules/module.py" (Kineto's) or ".../site-packages/torch/..." (absolute)
  for (std::string_view root : {std::string_view("torch/"), std::string_view("functorch/"), std::string_view("torchgen/")}) {
    if (path.starts_with(root)) return true;
    for (size_t at = path.find(root); at != std::string_view::npos; at = path.find(root, at + 1))
      if (at > 0 && path[at - 1] == '/') return true;
  }
  return false;
}

}  // namespace npud
