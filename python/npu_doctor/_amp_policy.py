"""Which precision each aten op runs in under autocast: the op lists and the per-op facts
(mutated arguments, views, RNG use) the shadow run needs.

The lists come from the knowledge base through `NPUD_AMP_LISTS` (one `<aten name>\\t<policy>`
line per op, written by `npu-doctor amp-check`). They name ops the way autocast sees them,
above PyTorch's decompositions (`linear`, `softmax.int`, `conv2d`), while the dispatch mode
sees what is left after them (`addmm`, `_softmax`, `convolution`); COMPOSITE_TO_DISPATCHED
carries a policy down to those names when the list has none of its own for them.
"""

import torch

from . import _amp_attention
from . import _op_families as _op_families_tsv
from ._errors import pass_on_async

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

# Knowledge-base spellings of the policies (data/knowledge/autocast.tsv).
_POLICY_NAMES = {
    "lower": LOWER, "lower_precision_fp": LOWER,
    "fp32": FP32, "fp32_set_opt_dtype": FP32, "fp32_append_dtype": FP32, "banned": FP32,
    "promote": PROMOTE,
}

COMPOSITE_TO_DISPATCHED = {
    "conv1d": ("convolution",), "conv2d": ("convolution",), "conv3d": ("convolution",),
    "_convolution": ("convolution",), "conv_transpose1d": ("convolution",),
    "conv_transpose2d": ("convolution",), "conv_transpose3d": ("convolution",),
    "softmax": ("_softmax",), "log_softmax": ("_log_softmax",),
    "layer_norm": ("native_layer_norm",), "group_norm": ("native_group_norm",),
    "batch_norm": ("native_batch_norm", "_native_batch_norm_legit"),
    "nll_loss": ("nll_loss_forward",), "nll_loss2d": ("nll_loss2d_forward",),
    "linear": ("addmm", "mm"), "matmul": ("mm", "bmm"), "einsum": ("bmm", "mm"),
    "prelu": ("_prelu_kernel",), "cdist": ("_cdist_forward",), "pdist": ("_pdist_forward",),
    "norm": ("linalg_vector_norm",), "frobenius_norm": ("linalg_vector_norm",),
    "scaled_dot_product_attention": ("_scaled_dot_product_attention_math",),
}

# In-code API without a lists file: the core of the NPU autocast lists (torch_npu 2.1),
# enough for matmul/conv in low precision and reductions/normalisation in fp32.
BUILTIN_LISTS_NAME = "built-in default (matmul/conv lower; exp/log/pow/softmax/norms/losses/sum fp32; no lists file)"
_BUILTIN = {
    LOWER: "addbmm addmm addmv addr baddbmm bmm chain_matmul conv1d conv2d conv3d conv_tbc "
           "conv_transpose1d conv_transpose2d conv_transpose3d convolution _convolution einsum "
           "linalg_multi_dot linear matmul mm mv prelu",
    FP32: "acos asin cosh erfinv exp expm1 log log10 log1p log2 pow reciprocal rsqrt sinh tan "
          "softplus layer_norm native_layer_norm group_norm softmax log_softmax logsumexp "
          "cumsum cumprod sum prod norm linalg_vector_norm dist cdist pdist renorm "
          "binary_cross_entropy_with_logits kl_div l1_loss mse_loss nll_loss nll_loss2d "
          "smooth_l1_loss huber_loss cosine_similarity",
    PROMOTE: "addcdiv addcmul atan2 bilinear cross dot grid_sampler index_put scatter_add tensordot",
}


class OpLists:
    def __init__(self, entries, description):
        self.description = description
        self._full = {}    # "add.Tensor" -> policy
        self._base = {}    # "add" -> policy
        for name, policy in entries:
            self._full.setdefault(name, policy)
            # a line without an overload applies to every overload; with one, it also
            # stands for the op's other overloads when they have no line of their own
            self._base.setdefault(name.split(".", 1)[0], policy)
        for composite, targets in COMPOSITE_TO_DISPATCHED.items():
            policy = self._base.get(composite)
            if policy is None:
                continue
            for t in targets:
                self._base.setdefault(t, policy)

    def policy(self, name, overload):
        """Policy of aten `name` (no `aten::`) with `overload` ("default" for none), or None."""
        if overload != "default":
            p = self._full.get(name + "." + overload)
            if p is not None:
                return p
        return self._base.get(name)

    @classmethod
    def from_file(cls, path, description=None):
        entries = []
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                fields = line.split("\t") if "\t" in line else line.split()
                if len(fields) < 2:
                    raise ValueError("%s:%d: expected `<aten name>\\t<policy>`" % (path, number))
                policy = _POLICY_NAMES.get(fields[1].strip())
                if policy is None:
                    raise ValueError("%s:%d: unknown policy %r" % (path, number, fields[1]))
                entries.append((normalize_name(fields[0]), policy))
        return cls(entries, description or "lists file %s (%d ops)" % (path, len(entries)))

    @classmethod
    def builtin(cls):
        entries = [(n, p) for p, names in _BUILTIN.items() for n in names.split()]
        return cls(entries, BUILTIN_LISTS_NAME)


def normalize_name(name):
    name = name.strip()
    for prefix in ("aten::", "aten.", "torch.ops.aten."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if name.endswith(".default"):
        name = name[:-len(".default")]
    return name


class OpInfo:
    """Facts about one aten overload, computed once."""
    __slots__ = ("name", "policy", "mutated", "is_view", "rng", "moves_data", "undefined", "attention")

    def __init__(self, func, lists):
        schema = func._schema
        base = schema.name.split("::", 1)[-1]
        self.name = base
        self.policy = lists.policy(base, func._overloadname)
        # (position in args, or keyword name) of every argument the op writes to
        self.mutated = []
        positional = 0
        for a in schema.arguments:
            info = a.alias_info
            if info is not None and info.is_write:
                self.mutated.append(a.name if a.kwarg_only else positional)
            if not a.kwarg_only:
                positional += 1
        self.is_view = (not self.mutated and any(r.alias_info is not None for r in schema.returns))
        try:
            self.rng = torch.Tag.nondeterministic_seeded in func.tags
        except Exception as e:
            pass_on_async(e)
            self.rng = base in _RNG_FALLBACK
        self.moves_data = self.is_view or base in _COPIES
        # Its output is memory nobody wrote yet (dropout's mask buffer before bernoulli_ fills
        # it): nothing to measure, and the shadow is the real buffer.
        self.undefined = base in _UNDEFINED
        self.attention = _amp_attention.spec_of(schema.name + ("" if func._overloadname == "default"
                                                              else "." + func._overloadname)) \
            or _amp_attention.spec_of(schema.name)


def _op_families(tsv):
    """data/facts/op-families.tsv (the generated copy in _op_families.py): family -> op base names,
    the same sets the core judges by (src/knowledge/op_families.hpp)."""
    out = {}
    for line in tsv.splitlines():
        if line and not line.startswith("#"):
            name, ops = line.split("\t", 1)
            out[name] = frozenset(ops.split())
    return out


_FAMILIES = _op_families(_op_families_tsv.TSV)


def op_family(name):
    """The op base names of one family of data/facts/op-families.tsv."""
    return _FAMILIES[name]


# Its output is memory nobody wrote yet.
_UNDEFINED = op_family("undefined_output")

# torch without op tags: the seeded random ops by name.
_RNG_FALLBACK = frozenset(("bernoulli", "bernoulli_", "native_dropout", "dropout", "rand", "rand_like",
                           "randn", "randn_like", "randint", "randint_like", "randperm", "normal",
                           "normal_", "uniform_", "exponential_", "geometric_", "log_normal_",
                           "cauchy_", "random_", "multinomial", "rrelu_with_noise", "poisson"))

# Ops that only copy values or write a constant (numeric is written only when they change them).
_COPIES = op_family("value_copy") | op_family("value_fill")
