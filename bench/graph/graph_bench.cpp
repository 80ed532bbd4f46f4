// Graph + pattern matching throughput on a generated capture-like Trace (no file): a
// transformer-ish block (RMSNorm, rotary, attention, SwiGLU, GELU and filler ops) repeated
// until the op count is reached, one step per block group. Prints ops/s for 0.25M, 0.5M and
// 1M ops (and more with an argument): similar ops/s at each size shows linear cost.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graph/affinity.hpp"
#include "graph/dataflow.hpp"
#include "graph/optimizer_loop.hpp"
#include "graph/patterns.hpp"
#include "model/trace.hpp"

using namespace npud;

namespace {

struct Gen {
  Trace t;
  int64_t next_id = 1;
  int64_t time = 0;
  std::vector<StrId> names;
  uint32_t stack = 0;
  StrId module = 0, f32 = 0;

  uint32_t tensor(int64_t id, std::initializer_list<int64_t> shape) {
    TensorMeta m;
    m.id = id;
    m.storage = id;
    m.dtype = f32;
    m.dims_begin = uint32_t(t.dims.size());
    for (int64_t d : shape) t.dims.push_back(d);
    m.rank = uint8_t(shape.size());
    m.has_shape = true;
    return t.add_tensor(m);
  }
  // One op reading `in` and writing a fresh tensor; returns its id.
  int64_t op(const char* name, std::initializer_list<int64_t> in, std::initializer_list<int64_t> shape = {8, 128}) {
    Op o;
    o.name = t.intern(name);
    o.kind = OpKind::Aten;
    o.start_ns = time;
    o.dur_ns = 500;
    time += 1000;
    o.stack = stack;
    o.module = module;
    o.step_index = -1;
    o.inputs_begin = uint32_t(t.tensor_refs.size());
    for (int64_t id : in) t.tensor_refs.push_back(tensor(id, {8, 128}));
    o.inputs_count = uint32_t(in.size());
    int64_t out = next_id++;
    o.outputs_begin = uint32_t(t.tensor_refs.size());
    t.tensor_refs.push_back(tensor(out, shape));
    o.outputs_count = 1;
    t.ops.push_back(o);
    return out;
  }
  void block() {
    int64_t x = next_id++, w = next_id++, cos = next_id++, sin = next_id++, k = next_id++, v = next_id++;
    // RMSNorm
    int64_t p = op("aten::pow.Tensor_Scalar", {x});
    int64_t m = op("aten::mean.dim", {p}, {8, 1});
    int64_t r = op("aten::rsqrt", {op("aten::add.Tensor", {m}, {8, 1})}, {8, 1});
    x = op("aten::mul.Tensor", {op("aten::mul.Tensor", {x, r}), w});
    // rotary
    int64_t rot = op("aten::cat", {op("aten::neg", {op("aten::slice.Tensor", {x})}), op("aten::slice.Tensor", {x})});
    int64_t q = op("aten::add.Tensor", {op("aten::mul.Tensor", {x, cos}), op("aten::mul.Tensor", {rot, sin})});
    // attention
    int64_t s = op("aten::div.Tensor", {op("aten::bmm", {q, op("aten::transpose.int", {k})})});
    int64_t a = op("aten::bmm", {op("aten::_softmax", {op("aten::add.Tensor", {s, k})}), v});
    // SwiGLU + tanh GELU
    int64_t g = op("aten::mul.Tensor", {op("aten::silu", {op("aten::mm", {a, w})}), op("aten::mm", {a, w})});
    int64_t in = op("aten::mul.Tensor", {op("aten::add.Tensor", {g, op("aten::mul.Tensor", {op("aten::pow.Tensor_Scalar", {g})})})});
    op("aten::mul.Tensor", {op("aten::mul.Tensor", {g}), op("aten::add.Tensor", {op("aten::tanh", {in})})});
    // filler that matches nothing
    for (int i = 0; i < 8; ++i) x = op("aten::relu", {op("aten::mm", {x, w})});
  }
};

Trace generate(size_t ops) {
  Gen g;
  g.f32 = g.t.intern("float32");
  g.module = g.t.intern("model.layers.0");
  uint32_t f = g.t.add_frame("train.py", 42, "forward");
  g.stack = g.t.add_stack(std::span<const uint32_t>(&f, 1));
  size_t blocks_per_step = 64;
  while (g.t.ops.size() < ops) {
    int64_t start = g.time;
    for (size_t b = 0; b < blocks_per_step && g.t.ops.size() < ops; ++b) g.block();
    g.t.steps.push_back(Step{int64_t(g.t.steps.size()), start, g.time - start});
  }
  g.t.finalize();
  return std::move(g.t);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {250'000, 500'000, 1'000'000};
  if (argc > 1) sizes.push_back(size_t(std::atoll(argv[1])));
  std::printf("| ops | graph build | match (6 patterns + optimizer loops) | total | ops/s | matches |\n");
  std::printf("|-----|-------------|--------------------------------------|-------|-------|---------|\n");
  for (size_t n : sizes) {
    Trace t = generate(n);
    auto t0 = std::chrono::steady_clock::now();
    graph::DataflowGraph g(t);
    auto t1 = std::chrono::steady_clock::now();
    size_t found = 0;
    for (const graph::PatternSpec* p : graph::all_patterns()) found += graph::find_matches(g, *p).size();
    found += graph::find_optimizer_loops(g).size();
    auto t2 = std::chrono::steady_clock::now();
    double build = std::chrono::duration<double>(t1 - t0).count();
    double match = std::chrono::duration<double>(t2 - t1).count();
    std::printf("| %zu | %.3f s | %.3f s | %.3f s | %.2f M | %zu |\n", t.ops.size(), build, match, build + match,
                double(t.ops.size()) / (build + match) / 1e6, found);
  }
  return 0;
}
