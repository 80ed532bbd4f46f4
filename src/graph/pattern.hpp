// Subgraph patterns, written declaratively as expression trees over the dataflow graph,
// and the matcher that finds them.
//
// A pattern is the expression a user's code computes, e.g. RMSNorm
//     mul(X, rsqrt(add(mean(pow(X)), eps)))
// with variables (X) that must bind to the same tensor everywhere they appear. Matching
// starts at a root op (the last op of the expression) and walks producer edges; on the way
// it skips pass-through ops (views, reshapes, casts, copies) unless the pattern asks for
// that op by name. Alternatives (alt), commutative operands and products of several
// factors in any order are tried with full backtracking; since a pattern has a fixed size,
// the work per root is bounded and a whole trace is matched in linear time.
//
// Scalars: captures record tensor arguments only, so `x * 0.5` is a mul with one tensor
// input. scalar() matches such a missing argument, or a tensor of at most one element.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/dataflow.hpp"

namespace npud::graph {

struct PNode;
using P = std::shared_ptr<const PNode>;

struct PNode {
  enum class Kind : uint8_t { Op, Any, Scalar, Var, Bind, Alt, Product };
  Kind kind = Kind::Any;
  std::vector<std::string_view> names;   // Op: accepted base names
  std::vector<P> args;                   // Op: tensor inputs in order; Alt/Product: options/factors
  bool commutative = false;              // Op: the first two inputs may be swapped
  int var = -1;                          // Var/Bind: variable index
};

// --- the DSL ---
P op(std::initializer_list<std::string_view> names, std::vector<P> args);
P op_c(std::initializer_list<std::string_view> names, std::vector<P> args);  // commutative
P any();
P scalar();
P alt(std::vector<P> options);
// mul tree: the factors (non-scalar leaves) in any order and grouping, scalar factors and
// divisions by scalars anywhere in between.
P product(std::vector<P> factors);

// Variables of one pattern. var() makes a fresh one; bind(v, p) matches p and binds v to it.
class Vars {
 public:
  P var();
  P bind(const P& var, P inner);
  // A sub-expression used twice (x*x): the first use binds, the second must be the same value.
  std::pair<P, P> twice(P inner);
  int count() const { return count_; }

 private:
  int count_ = 0;
};

// Marks every node a match covers.
struct MatchState {
  std::vector<Value> bound;           // per variable
  std::vector<uint32_t> nodes;        // matched nodes (incl. skipped pass-through nodes)
};

class Matcher {
 public:
  explicit Matcher(const DataflowGraph& g) : g_(g) {}
  // Tries `root` at node n (its output 0). Only Forward-phase nodes match.
  bool match_at(const P& root, int vars, uint32_t n, MatchState& st) const;

 private:
  using Cont = std::function<bool()>;
  // v: the value to match; meta: its tensor metadata when known (for scalar()).
  bool m(const PNode& p, Value v, const TensorMeta* meta, MatchState& st, const Cont& k) const;
  bool m_op(const PNode& p, Value v, MatchState& st, const Cont& k) const;
  bool m_args(const PNode& p, uint32_t n, const uint32_t* order, size_t i, MatchState& st, const Cont& k) const;
  bool m_product(const std::vector<P>& f, uint32_t mask, Value v, const TensorMeta* meta, MatchState& st,
                 const Cont& k) const;
  // Input i of node n, or an absent value past its tensor inputs.
  Value input(uint32_t n, uint32_t i) const;
  bool scalar_like(uint32_t n, uint32_t i) const;
  // Skips pass-through producers whose name is not in `names`; kNone if v has no producer.
  uint32_t walk(Value v, const std::vector<std::string_view>* names, MatchState& st) const;

  const DataflowGraph& g_;
};

}  // namespace npud::graph
