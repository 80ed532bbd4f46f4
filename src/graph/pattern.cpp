#include "graph/pattern.hpp"

#include <algorithm>
#include <bit>

namespace npud::graph {

P op(std::initializer_list<std::string_view> names, std::vector<P> args) {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Op;
  p->names = names;
  p->args = std::move(args);
  return p;
}

P op_c(std::initializer_list<std::string_view> names, std::vector<P> args) {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Op;
  p->names = names;
  p->args = std::move(args);
  p->commutative = true;
  return p;
}

P any() {
  static const P p = std::make_shared<PNode>();
  return p;
}

P scalar() {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Scalar;
  return p;
}

P alt(std::vector<P> options) {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Alt;
  p->args = std::move(options);
  return p;
}

P product(std::vector<P> factors) {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Product;
  p->args = std::move(factors);
  return p;
}

P Vars::var() {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Var;
  p->var = count_++;
  return p;
}

P Vars::bind(const P& var, P inner) {
  auto p = std::make_shared<PNode>();
  p->kind = PNode::Kind::Bind;
  p->var = var->var;
  p->args = {std::move(inner)};
  return p;
}

std::pair<P, P> Vars::twice(P inner) {
  P v = var();
  return {bind(v, std::move(inner)), v};
}

namespace {
constexpr size_t kMaxNodesPerMatch = 256;   // a bound on one match's size (malformed graphs)
}

bool Matcher::match_at(const P& root, int vars, uint32_t n, MatchState& st) const {
  st.bound.assign(size_t(std::max(vars, 0)), Value{});
  st.nodes.clear();
  if (g_.node(n).phase != Phase::Forward) return false;
  return m(*root, Value{n, 0, kUnset}, g_.output(n), st, [] { return true; });
}

Value Matcher::input(uint32_t n, uint32_t i) const {
  auto in = g_.inputs(n);
  return i < in.size() ? in[i] : Value{};
}

bool Matcher::scalar_like(uint32_t n, uint32_t i) const {
  const TensorMeta* m = g_.input_meta(n, i);
  if (!m) return true;   // not a tensor argument: a Python number
  return m->has_shape && numel(g_.trace().shape(*m)) <= 1;
}

uint32_t Matcher::walk(Value v, const std::vector<std::string_view>* names, MatchState& st) const {
  uint32_t n = v.node;
  for (int guard = 0; n != kNone && guard < 64; ++guard) {
    const Node& node = g_.node(n);
    if (names && std::find(names->begin(), names->end(), node.base) != names->end()) return n;
    if (!node.pass_through || node.inputs_count == 0) return n;
    st.nodes.push_back(n);
    n = g_.inputs(n)[0].node;
  }
  return kNone;
}

bool Matcher::m(const PNode& p, Value v, const TensorMeta* meta, MatchState& st, const Cont& k) const {
  if (st.nodes.size() > kMaxNodesPerMatch) return false;
  switch (p.kind) {
    case PNode::Kind::Any:
      return v.present() && k();
    case PNode::Kind::Scalar:
      if (v.present() && (!meta || !meta->has_shape || numel(g_.trace().shape(*meta)) > 1)) return false;
      return k();
    case PNode::Kind::Var: {
      if (!v.present()) return false;
      Value r = g_.resolve(v);
      Value& b = st.bound[size_t(p.var)];
      if (b.present()) return b == r && k();
      b = r;
      if (k()) return true;
      b = Value{};
      return false;
    }
    case PNode::Kind::Bind:
      return m(*p.args[0], v, meta, st, [&] {
        Value& b = st.bound[size_t(p.var)];
        Value r = g_.resolve(v);
        if (b.present()) return b == r && k();
        b = r;
        if (k()) return true;
        b = Value{};
        return false;
      });
    case PNode::Kind::Alt:
      for (const P& o : p.args)
        if (m(*o, v, meta, st, k)) return true;
      return false;
    case PNode::Kind::Product:
      return m_product(p.args, (1u << p.args.size()) - 1, v, meta, st, k);
    case PNode::Kind::Op:
      return m_op(p, v, st, k);
  }
  return false;
}

bool Matcher::m_op(const PNode& p, Value v, MatchState& st, const Cont& k) const {
  size_t mark = st.nodes.size();
  uint32_t n = walk(v, &p.names, st);
  if (n == kNone || std::find(p.names.begin(), p.names.end(), g_.node(n).base) == p.names.end() ||
      g_.node(n).phase != Phase::Forward) {
    st.nodes.resize(mark);
    return false;
  }
  // More pattern inputs than tensor inputs only when the extra ones are scalars (x * 0.5).
  st.nodes.push_back(n);
  static const uint32_t kStraight[] = {0, 1, 2, 3, 4, 5, 6, 7};
  static const uint32_t kSwapped[] = {1, 0, 2, 3, 4, 5, 6, 7};
  if (p.args.size() <= 8) {
    if (m_args(p, n, kStraight, 0, st, k)) return true;
    if (p.commutative && p.args.size() >= 2 && m_args(p, n, kSwapped, 0, st, k)) return true;
  }
  st.nodes.resize(mark);
  return false;
}

bool Matcher::m_args(const PNode& p, uint32_t n, const uint32_t* order, size_t i, MatchState& st,
                     const Cont& k) const {
  if (i == p.args.size()) return k();
  uint32_t idx = order[i];
  Value v = input(n, idx);
  const TensorMeta* meta = g_.input_meta(n, idx);
  return m(*p.args[i], v, meta, st, [&] { return m_args(p, n, order, i + 1, st, k); });
}

bool Matcher::m_product(const std::vector<P>& f, uint32_t mask, Value v, const TensorMeta* meta, MatchState& st,
                        const Cont& k) const {
  if (!v.present() || mask == 0) return false;
  // One factor left: it may be this value itself.
  if (std::popcount(mask) == 1) {
    int i = std::countr_zero(mask);
    if (m(*f[size_t(i)], v, meta, st, k)) return true;
  }
  size_t mark = st.nodes.size();
  static const std::vector<std::string_view> kMulDiv = {"mul", "div"};
  uint32_t n = walk(v, &kMulDiv, st);
  if (n == kNone || g_.node(n).phase != Phase::Forward) {
    st.nodes.resize(mark);
    return false;
  }
  std::string_view base = g_.node(n).base;
  st.nodes.push_back(n);
  if (base == "mul" || base == "div") {
    // Scaled by a number (x * 0.5, x / 2): the factors are all in the other operand.
    bool s0 = g_.node(n).inputs_count >= 1 && scalar_like(n, 0);
    bool s1 = scalar_like(n, 1);
    if (s1 && m_product(f, mask, input(n, 0), g_.input_meta(n, 0), st, k)) return true;
    if (base == "mul" && s0 && !s1 && m_product(f, mask, input(n, 1), g_.input_meta(n, 1), st, k)) return true;
    // Two tensor factors: split the remaining factors between them, every way.
    if (base == "mul" && !s0 && !s1) {
      for (uint32_t sub = (mask - 1) & mask; sub != 0; sub = (sub - 1) & mask) {
        if (m_product(f, sub, input(n, 0), g_.input_meta(n, 0), st, [&] {
              return m_product(f, mask & ~sub, input(n, 1), g_.input_meta(n, 1), st, k);
            }))
          return true;
      }
    }
  }
  st.nodes.resize(mark);
  return false;
}

}  // namespace npud::graph
