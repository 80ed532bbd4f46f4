"""The comparison metrics of docs/metrics.md, computed with torch ops on the tensors' device.

`metrics(ref, target)` returns the dict written as `local` / `drift` in the capture file.
All reductions are stacked into one tensor and read back with one host copy, so a metric
costs one device sync. When every pair is finite (nearly always) the arithmetic is float32
with pairwise sums, about 20 passes over the data; pairs with a NaN or an infinity take a
masked path in float64 where the device has it (`metric_dtype`).
"""

import math
import threading

import torch

FP16_MAX = 65504.0
REL_FLOOR = 2.0 ** -24          # fp16's smallest subnormal: the floor of max_rel's divisor
KEYS = ("n", "finite", "cos", "max_abs", "max_rel", "rmse", "gt_1e3", "gt_5e3",
        "nan_ref", "nan", "inf_ref", "inf", "overflow", "underflow")

# The unpatched host read: the shim's own reads must not show up as the program's syncs.
_tolist = torch._C._TensorBase.tolist
_to = torch._C._TensorBase.to
_TO_HOST = torch.ops.aten._to_copy.default
_HOST = torch.device("cpu")


def _cpu(t):
    """t on the host, as a plain tensor: the copy op itself, not Tensor.cpu() (patched while
    recording; and on a tensor subclass that implements ops itself, a call inside a dispatch
    mode may keep its device)."""
    return t if t.device.type == "cpu" and type(t) is torch.Tensor else _TO_HOST(t, device=_HOST)


def metric_dtype(device_type):
    """float64 unless the device lacks it (MPS, and NPUs where float64 falls back)."""
    return torch.float32 if device_type in ("mps", "npu", "xla") else torch.float64


def empty_metrics(n=0):
    return {"n": n, "finite": 0, "cos": 1.0, "max_abs": 0.0, "max_rel": 0.0, "rmse": 0.0,
            "gt_1e3": 0.0, "gt_5e3": 0.0, "nan_ref": 0, "nan": 0, "inf_ref": 0, "inf": 0,
            "overflow": 0, "underflow": 0}


def metrics(ref, target, mdtype=None):
    """docs/metrics.md between `ref` (fp32 / trusted) and `target` (low precision)."""
    n = ref.numel()
    if n != target.numel():
        raise ValueError("metrics: %d reference elements vs %d target elements" % (n, target.numel()))
    if n == 0:
        return empty_metrics(0)
    if mdtype is None:
        mdtype = metric_dtype(ref.device.type)
    r = _to(ref.detach().reshape(-1), torch.float32)
    t = _to(target.detach().reshape(-1), device=r.device, dtype=torch.float32)
    m = _finite_metrics(r, t, n)
    if m is None:   # a NaN or an infinity somewhere (or sums past float32): the masked path
        m = _masked_metrics(_to(r, mdtype), _to(t, mdtype), n)
    return m


class _Scratch(threading.local):
    """Two float32 work buffers per thread, reused by every metric on CPU tensors. A fresh
    buffer of a few hundred KB comes from mmap and page-faults on every first touch: on the
    GPT's 190k-element outputs that was 3/4 of a metric's time (990 -> 260 us per call).
    Device tensors come from their caching allocator and take fresh buffers. Buffers past
    MAX_ELEMENTS are not kept."""
    MAX_ELEMENTS = 1 << 24   # 64 MB each

    def __init__(self):
        self.a = self.b = None

    def take(self, like, n):
        """(a, b): float32 buffers of n elements on like's device."""
        if like.device.type != "cpu" or n > self.MAX_ELEMENTS:
            return (torch.empty(n, dtype=torch.float32, device=like.device),
                    torch.empty(n, dtype=torch.float32, device=like.device))
        if self.a is None or self.a.numel() < n:
            self.a = torch.empty(n, dtype=torch.float32)
            self.b = torch.empty(n, dtype=torch.float32)
        return self.a[:n], self.b[:n]

    def release(self):
        self.a = self.b = None


scratch = _Scratch()


def _finite_metrics(r, t, n):
    """The usual case, every pair finite: float32 arithmetic and one host read. None when a
    sum is not finite. Sums of squares are pairwise (Σ(t-r)², relative error near float32's
    6e-8 at any size) or BLAS dots (|r|², |t|²: their error enters 1 - cos only squared, see
    _cosine_from_norms). Counts compare into float32 buffers and sum them: a comparison that
    makes a bool tensor, and its sum, cost 3-5x more on CPU. Every pass writes into the two
    scratch buffers: no allocation beyond the 0-dim results."""
    a, b = scratch.take(r, n)
    d = torch.sub(t, r, out=a).abs_()
    dd = torch.mul(d, d, out=b).sum()
    max_abs = d.max()
    rel = torch.div(d, torch.abs(r, out=b).clamp_min_(REL_FLOOR), out=b)
    max_rel = rel.max()
    gt5 = torch.gt(rel, 5e-3, out=a).sum()           # d is spent: a scratch buffer from here
    gt1 = torch.gt(rel, 1e-3, out=rel).sum()
    # |t|'s extremes say whether overflow (|t| > 65504) and underflow (t == 0 where r != 0)
    # can be non-zero; each is counted (three passes) only then, after the read.
    abs_t = torch.abs(t, out=b)
    t_lo, t_hi = torch.aminmax(abs_t)
    parts = torch.stack([torch.dot(r, r), torch.dot(t, t), dd, max_abs, max_rel, gt1, gt5, t_lo, t_hi])
    rr, tt, dd, max_abs, max_rel, gt1, gt5, t_lo, t_hi = _tolist(_cpu(parts))
    if not (math.isfinite(rr) and math.isfinite(tt) and math.isfinite(dd)):
        return None
    over = under = 0
    if t_hi > FP16_MAX or t_lo == 0.0:
        over, under = (int(x) for x in _tolist(_cpu(torch.stack([
            torch.gt(abs_t, FP16_MAX, out=b).sum(),   # b still holds |t|
            torch.dot(torch.eq(t, 0, out=a), torch.ne(r, 0, out=b))]))))   # t == 0 where r != 0
    return {
        "n": n, "finite": n, "cos": _cosine_from_norms(rr, tt, dd),
        "max_abs": max_abs, "max_rel": max_rel, "rmse": math.sqrt(dd / n),
        "gt_1e3": gt1 / n, "gt_5e3": gt5 / n,
        "nan_ref": 0, "nan": 0, "inf_ref": 0, "inf": 0, "overflow": over, "underflow": under}


def _masked_metrics(r, t, n):
    """Pairs with a NaN or an infinity: counted, and left out of the error metrics."""
    fin_r, fin_t = torch.isfinite(r), torch.isfinite(t)
    nan_r, nan_t = torch.isnan(r), torch.isnan(t)
    fin = fin_r & fin_t
    mdtype = r.dtype
    counts = torch.stack([_to(x.sum(), mdtype) for x in (nan_r, nan_t, torch.isinf(r), torch.isinf(t))])
    fin_count = _to(fin.sum(), mdtype).reshape(1)
    zero = torch.zeros((), dtype=mdtype, device=r.device)
    rf = torch.where(fin, r, zero)
    tf = torch.where(fin, t, zero)
    overflow = ((~fin_t | (t.abs() > FP16_MAX)) & fin_r & ~nan_t).sum()
    underflow = ((t == 0) & (r != 0)).sum()
    d = (tf - rf).abs_()
    rel = rf.abs().clamp_min_(REL_FLOOR)
    torch.div(d, rel, out=rel)
    parts = torch.cat([fin_count, torch.stack([_to(x, mdtype) for x in (
        torch.dot(rf, tf), torch.dot(rf, rf), torch.dot(tf, tf), d.max(), rel.max(), torch.dot(d, d),
        (rel > 1e-3).sum(), (rel > 5e-3).sum())]), counts,
        torch.stack([_to(overflow, mdtype), _to(underflow, mdtype)])])
    (finite, dot, rr, tt, max_abs, max_rel, dd, gt1, gt5,
     nan_ref, nan, inf_ref, inf, over, under) = _tolist(_cpu(parts))
    finite = int(finite)
    return {
        "n": n, "finite": finite, "cos": _cosine(finite, dot, rr, tt),
        "max_abs": max_abs if finite else 0.0, "max_rel": max_rel if finite else 0.0,
        "rmse": math.sqrt(dd / finite) if finite else 0.0,
        "gt_1e3": gt1 / finite if finite else 0.0, "gt_5e3": gt5 / finite if finite else 0.0,
        "nan_ref": int(nan_ref), "nan": int(nan), "inf_ref": int(inf_ref), "inf": int(inf),
        "overflow": int(over), "underflow": int(under)}


def identity_metrics(x):
    """metrics(x, x) with two reductions when all is finite (four otherwise) instead of a
    dozen: the op's low-precision and fp32 results are the same tensor (nothing ran in low
    precision on this path)."""
    n = x.numel()
    if n == 0:
        return empty_metrics(0)
    if not (x.is_floating_point() or x.is_complex()):
        m = empty_metrics(n)
        m["finite"] = n
        return m
    v = x.detach().reshape(-1)
    if x.is_floating_point():   # the usual case, all finite: |v|² and max |v| only
        v32 = _to(v, torch.float32)
        a = torch.abs(v32, out=scratch.take(v32, n)[0])
        sq, top = _tolist(_cpu(torch.stack([torch.dot(v32, v32), a.max()])))
        if math.isfinite(sq):
            m = empty_metrics(n)
            m["finite"] = n
            if top > FP16_MAX:
                m["overflow"] = int(_tolist(_cpu(torch.gt(a, FP16_MAX, out=a).sum())))
            return m
    nan_v, inf_v = torch.isnan(v), torch.isinf(v)
    fin = ~(nan_v | inf_v)
    parts = torch.stack([fin.sum(), nan_v.sum(), inf_v.sum(), (fin & (v.abs() > FP16_MAX)).sum()])
    finite, nan, inf, over = (int(a) for a in _tolist(_cpu(parts)))
    m = empty_metrics(n)
    m.update({"finite": finite, "cos": 1.0 if finite else None, "nan_ref": nan, "nan": nan,
              "inf_ref": inf, "inf": inf, "overflow": over})
    return m


def _cosine_from_norms(rr, tt, dd):
    """cos(r, t) from |r|^2, |t|^2 and |t - r|^2, without the dot product: written as
    1 - (|t-r|^2 - (|r| - |t|)^2) / (2 |r| |t|), the small 1 - cos keeps its precision."""
    if rr == 0.0 and tt == 0.0:
        return 1.0
    if rr == 0.0 or tt == 0.0:
        return 0.0
    nr, nt = math.sqrt(rr), math.sqrt(tt)
    c = 1.0 - (dd - (nr - nt) ** 2) / (2.0 * nr * nt)
    return max(-1.0, min(1.0, c))


def _cosine(finite, dot, rr, tt):
    if finite == 0:
        return None
    if rr == 0.0 and tt == 0.0:
        return 1.0
    if rr == 0.0 or tt == 0.0:
        return 0.0
    c = dot / (math.sqrt(rr) * math.sqrt(tt))
    return max(-1.0, min(1.0, c))   # rounding can put |c| a hair above 1


def differs(m):
    """The target's values are not the reference's (for ops that only move data)."""
    return (m["max_abs"] > 0.0 or m["nan"] != m["nan_ref"] or m["inf"] != m["inf_ref"]
            or m["underflow"] > 0)


def metrics_json(m):
    parts = []
    for k in KEYS:
        v = m[k]
        if v is None or (isinstance(v, float) and not math.isfinite(v)):
            text = "null"
        elif isinstance(v, float):
            text = repr(v)
        else:
            text = str(int(v))
        parts.append('"%s":%s' % (k, text))
    return "{" + ",".join(parts) + "}"
