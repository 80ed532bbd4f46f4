#include "graph/forms.hpp"

namespace npud::graph::forms {

P scaled(Vars&, P e) {
  return alt({e, op_c({"mul"}, {e, scalar()}), op({"div"}, {e, scalar()})});
}

P square(Vars& vars, P e) {
  auto [first, again] = vars.twice(e);
  return alt({op({"pow"}, {e}), op({"square"}, {e}), op({"mul"}, {first, again})});
}

P cube(Vars& vars, P e) {
  // Three uses of one value: bind it once, then every factor must be that value.
  P v = vars.var();
  P bound = vars.bind(v, e);
  return alt({op({"pow"}, {e}), product({bound, v, v}), product({bound, square(vars, v)})});
}

P sqrt_of(P e) { return op({"sqrt"}, {e}); }

P rsqrt_of(Vars& vars, P e) {
  P recip = op({"reciprocal"}, {sqrt_of(e)});
  return alt({op({"rsqrt"}, {e}), scaled(vars, recip), op({"div"}, {scalar(), sqrt_of(e)})});
}

P mean_of(P e) {
  P sum = op({"sum"}, {e});
  return alt({op({"mean"}, {e}), op({"div"}, {sum, scalar()}), op_c({"mul"}, {sum, scalar()})});
}

P plus_eps(P e) { return alt({op_c({"add"}, {e, scalar()}), e}); }

P divide(P x, P d) { return alt({op({"div"}, {x, d}), op_c({"mul"}, {x, op({"reciprocal"}, {d})})}); }

}  // namespace npud::graph::forms
