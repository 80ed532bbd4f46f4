"""Every public torch function and Tensor operator whose aten op takes a Scalar operand (a
`<op>.Scalar` / `.Tensor_Scalar` / `.Scalar_Tensor` overload in the running torch's schemas),
called with int, float and bool scalars on int, float and bool tensors inside a training step.
Prints one digest line per call (its result's dtype, shape and values, or the exception's
type), then how many calls it made: the capture must leave every line as a plain run prints it
(composite kernels pass wrapped scalars where the schema says Tensor; torch 1.x reads a bool
Scalar as an int through an op object)."""
import hashlib
import operator
import sys

import torch

OPERATORS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
             "remainder": operator.mod, "floor_divide": operator.floordiv, "pow": operator.pow,
             "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
             "bitwise_left_shift": operator.lshift, "bitwise_right_shift": operator.rshift,
             "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
             "ge": operator.ge}
SKIP = {"normal", "bernoulli", "random", "uniform", "_foobar"}   # random draws differ by design


def scalar_ops():
    """Base names with an overload taking a Scalar where another takes a Tensor."""
    names = set()
    for name in dir(torch.ops.aten):
        if name.startswith("_") or name.endswith("_") or name in SKIP:
            continue
        try:
            packet = getattr(torch.ops.aten, name)
            overloads = packet.overloads()
        except Exception:
            continue
        if any(o in ("Scalar", "Tensor_Scalar", "Scalar_Tensor") for o in overloads) and "Tensor" in overloads:
            names.add(name)
    return sorted(names)


def digest(value):
    if isinstance(value, torch.Tensor):
        v = value.detach()
        data = v.to(torch.float64).nan_to_num(0.0, 1e300, -1e300).tolist() if v.is_floating_point() else v.tolist()
        return "%s%s:%s" % (str(v.dtype).replace("torch.", ""), list(v.shape),
                            hashlib.sha1(repr(data).encode()).hexdigest()[:12])
    return type(value).__name__


def calls(name):
    fn = getattr(torch, name, None)
    op = OPERATORS.get(name)
    tensors = {"int": torch.tensor([3, 5, 7, 12], dtype=torch.int64), "float": torch.tensor([0.5, 1.5, -2.0, 3.25]),
               "bool": torch.tensor([True, False, True, True])}
    for tkind, t in tensors.items():
        for scalar in (2, 0.5, True):
            if fn is not None:
                yield "%s(%s,%r)" % (name, tkind, scalar), lambda t=t, s=scalar: fn(t, s)
            if op is not None:
                yield "op %s(%s,%r)" % (name, tkind, scalar), lambda t=t, s=scalar: op(t, s)
                yield "op %s(%r,%s)" % (name, scalar, tkind), lambda t=t, s=scalar: op(s, t)


model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lines = []
for step in range(3):
    loss = model(torch.ones(2, 4)).sum()
    loss.backward()
    if step == 1:   # inside the recorded steps (1:3)
        for name in scalar_ops():
            for label, call in calls(name):
                try:
                    lines.append("%s -> %s" % (label, digest(call())))
                except Exception as e:
                    lines.append("%s -> %s" % (label, type(e).__name__))
    optimizer.step()
    optimizer.zero_grad()
for line in lines:
    print(line)
print("calls", len(lines), "ops", len(scalar_ops()), file=sys.stderr)
