// Which kernel a backend without one of its own (torch_npu's PrivateUse1) gets for an aten op,
// per torch minor release: data/knowledge/dispatch.tsv, generated from each torch wheel's
// native_functions.yaml by tools/gen_dispatch_facts.py (docs/knowledge.md "Dispatch facts per
// torch"). It decides what an op the NPU op list lacks does there: falls back to the CPU
// (Backend), is decomposed before reaching the NPU (Implicit), runs torch's generic kernel as
// other NPU ops (Explicit), or needs its out overload (NonFunctional). Dispatch changes between
// torch releases (`_foreach_mul_.Tensor` is backend-only up to 2.3, generic from 2.4): rules
// take the column of the torch that ran, or of the torch the chosen torch_npu wheel pairs with.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace npud {

enum class DispatchKind : char {
  Unknown = 0,          // not in the table (an npu:: op, an op of a newer torch...)
  Implicit = 'I',       // CompositeImplicitAutograd: decomposed above every backend
  Explicit = 'E',       // CompositeExplicitAutograd: a generic kernel made of other ops
  NonFunctional = 'N',  // CompositeExplicitAutogradNonFunctional: redispatches to its out/inplace kernel
  Backend = 'B',        // backend kernels only
};

// "explicit", "implicit", "explicit_nonfunctional", "backend", "" (Unknown).
std::string_view to_string(DispatchKind k);
// 'I', 'E', 'N', 'B' (the table's and the capture's codes) -> the kind; Unknown otherwise.
DispatchKind dispatch_kind_of(char code);

class DispatchFacts {
 public:
  // Parses dispatch.tsv; throws KnowledgeError naming the line.
  void parse(std::string_view name, std::string_view text);
  bool empty() const { return lines_.empty(); }

  // Torch minor lines of the columns, oldest first ("1.12" ... "2.15").
  const std::vector<std::string>& lines() const { return lines_; }
  // The column for a torch version ("2.13.0+cpu", "2.1.0", "1.13.0a0"): its minor line; a line
  // older than the table's first gets the first column, a newer one the last. npos if the
  // table is empty or the version does not parse.
  size_t column(std::string_view torch_version) const;

  // The op's kind at a column. `exact`: a bare name is the default overload (captures keep
  // overloads); else a bare name is the default overload when the op has one, else its
  // first overload's kind (implicit preferred: sources that drop overloads name the call the
  // program made). An op absent at that column takes its kind at the nearest column where it
  // exists (newer first): the name came from the torch that ran.
  DispatchKind kind(std::string_view op, size_t column, bool exact) const;
  // The structured_delegate (out overload) of a NonFunctional op ("isin.Tensor_Tensor_out"),
  // or "" when the table names none.
  std::string_view delegate(std::string_view op) const;

 private:
  struct Row {
    std::string codes;      // one code per column ('.' = absent)
    std::string delegate;
  };
  const Row* row(std::string_view op, bool exact, size_t column) const;
  char code_near(const Row& r, size_t column) const;

  std::vector<std::string> lines_;
  std::unordered_map<std::string, Row> rows_;                       // "add.Tensor" -> row
  std::unordered_map<std::string, std::vector<std::string>> overloads_;  // "add" -> {"add.Tensor", ...}
};

}  // namespace npud
