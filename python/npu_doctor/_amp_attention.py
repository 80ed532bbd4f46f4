"""Fused attention kernels under amp-check (docs/amp-check.md "Fused attention kernels").

A device's fused attention kernels (CUDA's cudnn / efficient / flash SDPA, torch_npu's
npu_fusion_attention) have no fp32 path, or another one with other outputs and layouts: the
same kernel run on the fp32 shadows is no reference (on an H200 it gave cos 0.0009 against
its own bf16 output). Their shadow is what they mean, computed in fp32 on the inputs'
shadows: softmax(scale * q·kᵀ + bias, masked) · v, in the kernel's layout, grouped-query heads
repeated. Output 0 (the attention output) is measured and carries the reference; the other
outputs (log-sum-exp, RNG state...) restart from the real values. The backward kernels and
calls the reference does not cover (dropout, varlen, band masks) are resynchronised and not
measured.
"""

import math

import torch

from . import _amp_emulate as em
from ._amp_metrics import identity_metrics, metrics

F32 = torch.float32


class Spec:
    """Where a kernel keeps its arguments (schema names) and how to read them."""
    __slots__ = ("bias", "mask", "dropout", "keep_prob", "causal", "layout", "heads", "backward")

    def __init__(self, bias=None, mask=None, dropout=None, keep_prob=None, causal=None, layout=None, heads=None,
                 backward=False):
        self.bias, self.mask, self.dropout, self.keep_prob = bias, mask, dropout, keep_prob
        self.causal, self.layout, self.heads, self.backward = causal, layout, heads, backward


# aten kernels take BNSD tensors and an additive (float) or keep (bool) attn_bias.
_SPECS = {
    "aten::_scaled_dot_product_cudnn_attention": Spec(bias="attn_bias", dropout="dropout_p", causal="is_causal"),
    "aten::_scaled_dot_product_efficient_attention": Spec(bias="attn_bias", dropout="dropout_p", causal="is_causal"),
    "aten::_scaled_dot_product_flash_attention": Spec(dropout="dropout_p", causal="is_causal"),
    "aten::_scaled_dot_product_fused_attention_overrideable": Spec(bias="attn_bias", dropout="dropout_p",
                                                                   causal="is_causal"),
    "npu::npu_fusion_attention": Spec(bias="pse", mask="atten_mask", keep_prob="keep_prob", layout="input_layout",
                                      heads="head_num"),
}
_BACKWARD = ("aten::_scaled_dot_product_cudnn_attention_backward",
             "aten::_scaled_dot_product_efficient_attention_backward",
             "aten::_scaled_dot_product_flash_attention_backward",
             "aten::_scaled_dot_product_fused_attention_overrideable_backward",
             "aten::_flash_attention_forward", "aten::_flash_attention_backward",
             "aten::_efficient_attention_forward", "aten::_efficient_attention_backward",
             "npu::npu_fusion_attention_grad", "npu::npu_fusion_attention_v2", "npu::npu_fusion_attention_grad_v2",
             "npu::npu_prompt_flash_attention", "npu::npu_incre_flash_attention")


def spec_of(schema_name):
    """The Spec of a fused attention kernel (`aten::_scaled_dot_product_cudnn_attention`),
    a backward-only Spec for the kernels that are only resynchronised, or None."""
    spec = _SPECS.get(schema_name)
    if spec is not None:
        return spec
    if schema_name in _BACKWARD:
        return Spec(backward=True)
    return None


def mirror(session, p, outs):
    """_amp.AmpSession.mirror for a fused attention kernel."""
    spec = p.info.attention
    call = _named(p.func, p.args, p.kwargs)
    ref = None if spec.backward else _reference(call, spec, session.shadows)
    if ref is None:
        session.resync(outs)
        return ""
    for o in outs[1:]:
        if isinstance(o, torch.Tensor):
            session.resync([o])
    out = outs[0]
    session.shadows.set_output(out, ref, True, out.dtype in em.LOWP_DTYPES)
    if not p.calls:
        return ""
    drift = metrics(ref, out, session.mdtype)
    local = identity_metrics(ref)
    if out.dtype in em.LOWP_DTYPES:   # the kernel itself, fed the exact inputs in its dtypes
        exact = _exact_inputs(p, session.shadows)
        local_out = em.flat_outputs(session.call(p, exact[0], exact[1]))[0]
        local = metrics(ref, local_out, session.mdtype)
    return session.numeric(p, out.dtype in em.LOWP_DTYPES, out, local, drift, 0, "math")


def _named(func, args, kwargs):
    call = {}
    for i, a in enumerate(func._schema.arguments):
        if i < len(args) and not a.kwarg_only:
            call[a.name] = args[i]
        elif a.name in kwargs:
            call[a.name] = kwargs[a.name]
    return call


def _exact_inputs(p, smap):
    """The op's arguments with every floating tensor replaced by its shadow in the dtype the
    real op got it in."""
    def exact(t):
        if not t.is_floating_point():
            return t
        return em.tensor_to(smap.shadow(t)[0], t.dtype)
    return em.map_args(p.args, p.kwargs, exact)


def _reference(call, spec, smap):
    """The attention output in fp32 from the inputs' shadows, or None where the call is one
    the reference does not cover."""
    q, k, v = call.get("query"), call.get("key"), call.get("value")
    if not all(isinstance(t, torch.Tensor) for t in (q, k, v)):
        return None
    if spec.dropout and float(call.get(spec.dropout) or 0.0) > 0.0:
        return None
    if spec.keep_prob and float(call.get(spec.keep_prob, 1.0)) < 1.0:
        return None
    layout = call.get(spec.layout, "BNSD") if spec.layout else "BNSD"
    heads = int(call.get(spec.heads, 0) or 0) if spec.heads else 0
    sparse = int(call.get("sparse_mode", 0) or 0)
    if layout not in ("BNSD", "BSND", "BSH", "SBH") or sparse not in (0, 1, 2, 3) \
            or call.get("actual_seq_qlen") is not None or call.get("prefix") is not None:
        return None
    shadow = (lambda t: em.tensor_to(smap.shadow(t)[0], F32))
    head_dim = 0
    if layout in ("BSH", "SBH"):
        if q.dim() != 3 or heads <= 0 or q.shape[-1] % heads:
            return None
        head_dim = q.shape[-1] // heads
    qs, ks, vs = (_to_bnsd(shadow(t), layout, head_dim) for t in (q, k, v))
    if qs is None or ks is None or vs is None:
        return None
    n, nkv = qs.shape[1], ks.shape[1]
    if nkv != n:
        if nkv == 0 or n % nkv:
            return None
        ks, vs = ks.repeat_interleave(n // nkv, dim=1), vs.repeat_interleave(n // nkv, dim=1)
    scale = call.get("scale")
    if scale is None:
        scale = 1.0 / math.sqrt(qs.shape[-1])
    scores = torch.matmul(qs, ks.transpose(-2, -1))
    bias = call.get(spec.bias) if spec.bias else None
    if spec.layout is not None:   # npu_fusion_attention: scale * (pse + q·kᵀ)
        if isinstance(bias, torch.Tensor):
            scores = scores + shadow(bias)
        scores = scores * float(scale)
    else:                         # aten: scale * q·kᵀ + bias
        scores = scores * float(scale)
        if isinstance(bias, torch.Tensor):
            scores = scores.masked_fill(~bias, float("-inf")) if bias.dtype == torch.bool else scores + shadow(bias)
    sq, skv = scores.shape[-2], scores.shape[-1]
    causal = bool(call.get(spec.causal)) if spec.causal else sparse in (2, 3)
    if causal:   # aten and sparse_mode 2: top-left aligned; sparse_mode 3: bottom-right
        offset = skv - sq if sparse == 3 else 0
        keep = torch.ones(sq, skv, dtype=torch.bool, device=scores.device).tril(offset)
        scores = scores.masked_fill(~keep, float("-inf"))
    mask = call.get(spec.mask) if spec.mask else None
    if isinstance(mask, torch.Tensor) and sparse in (0, 1):   # npu: True / 1 = masked out
        scores = scores.masked_fill(mask.to(torch.bool), float("-inf"))
    out = torch.matmul(torch.softmax(scores, dim=-1), vs)
    return _from_bnsd(out, layout, q)


def _to_bnsd(t, layout, head_dim):
    """BNSD view of a kernel input; BSH/SBH split by the query's head size (key and value of
    grouped-query attention carry fewer heads of the same size)."""
    if layout == "BNSD":
        return t if t.dim() == 4 else None
    if layout == "BSND":
        return t.transpose(1, 2) if t.dim() == 4 else None
    if t.dim() != 3 or head_dim <= 0 or t.shape[-1] % head_dim:
        return None
    if layout == "SBH":
        t = t.transpose(0, 1)
    b, s, h = t.shape
    return t.reshape(b, s, h // head_dim, head_dim).transpose(1, 2)


def _from_bnsd(out, layout, like):
    if layout == "BNSD":
        return out
    if layout == "BSND":
        return out.transpose(1, 2)
    b, n, s, d = out.shape
    bsh = out.transpose(1, 2).reshape(b, s, n * d)
    return bsh.transpose(0, 1) if layout == "SBH" else bsh
