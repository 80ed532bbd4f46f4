// Whose code a frame is: the program's own, or an installed package's (transformers,
// accelerate, timm...), named with the package's version when the capture recorded it. Rules
// anchor a finding inside a package at the program's own frame that led there and name the
// package site beside it (rules/rule_support.hpp location_of; docs/library-advice.md).
//
// A package frame is one in site-packages / dist-packages (the capture's absolute paths), or a
// path Kineto shortened relative to sys.path whose first part names a known library
// ("transformers/masking_utils.py"). torch's own frames never reach a stack: the shim and the
// readers leave them out.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "model/package_path.hpp"
#include "model/trace.hpp"

namespace npud {

struct PackageSite {
  std::string package;   // "transformers" ("" = not a package frame)
  std::string version;   // "5.17.0", "" when the input does not say
  std::string file;      // inside the package: "models/llama/modeling_llama.py"
  std::string function;  // "forward"
  int line = 0;
  // "transformers 5.17.0, models/llama/modeling_llama.py:66 (forward)"
  std::string describe() const;
};

class SourceSites {
 public:
  explicit SourceSites(const Trace& t);
  // The package a frame belongs to, or an empty PackageSite for the program's own code.
  PackageSite site(const Frame& f) const;
  bool is_package(StrId file) const;

 private:
  struct Where {
    std::string package, file;   // package "" = the program's own
  };
  const Where& classify(StrId file) const;

  const Trace& t_;
  mutable std::unordered_map<StrId, Where> cache_;
};

}  // namespace npud
