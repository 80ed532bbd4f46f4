// What the library models a capture ran allow (the shim's `npu_doctor_model` events: a
// transformers model's class, its attention support flags and its config's field names), for
// checking a lever against the model it is given for: T5 has `_supports_flash_attn = False`,
// and its config has no `hidden_act` (issue 45).
#pragma once

#include <string>
#include <string_view>

#include "model/trace.hpp"

namespace npud {

enum class FactHolds { Yes, No, Unknown };

class ModelFacts {
 public:
  explicit ModelFacts(const Trace& t) : t_(t) {}
  // The recorded model a module path runs in: the longest recorded path that is it or above it;
  // a finding without a module takes the only model recorded. "" none.
  std::string model_of(std::string_view module_path) const;
  // "A|B": holds when the model's class sets flag A (`_supports_flash_attn`) to True or its
  // config has field B (`config.hidden_act`); No when the capture recorded any of them and none
  // holds (transformers 5 sets `_supports_flash_attn`, 4.x `_supports_flash_attn_2`); Unknown
  // when it recorded none (an older capture, a model not from transformers).
  FactHolds holds(std::string_view condition, std::string_view model) const;
  // The model's class ("transformers.models.t5.modeling_t5.T5ForConditionalGeneration").
  std::string_view model_class(std::string_view model) const;

 private:
  std::string_view fact(std::string_view model, std::string_view name) const;
  const Trace& t_;
};

}  // namespace npud
