// Equivalent ways of writing the same math, as pattern building blocks shared by the
// patterns in graph/patterns/. Each helper returns the alternatives; the matcher tries them.
#pragma once

#include "graph/pattern.hpp"

namespace npud::graph::forms {

// e * number, e / number, or e itself.
P scaled(Vars& vars, P e);
// e^2: pow(e, 2), square(e), e * e.
P square(Vars& vars, P e);
// e^3: pow(e, 3), e * e * e, e * e^2 (any grouping).
P cube(Vars& vars, P e);
// 1/sqrt(e): rsqrt(e), reciprocal(sqrt(e)) (possibly scaled: 1 / sqrt(e) is reciprocal * 1),
// number / sqrt(e).
P rsqrt_of(Vars& vars, P e);
// sqrt(e) (possibly cast).
P sqrt_of(P e);
// Mean over a dim: mean(e), sum(e) / n, sum(e) * (1/n).
P mean_of(P e);
// e + number (the epsilon), or e alone.
P plus_eps(P e);
// x * (1 / d): x / d, x * reciprocal(d), x * rsqrt-form when d is a sqrt (callers decide).
P divide(P x, P d);

}  // namespace npud::graph::forms
