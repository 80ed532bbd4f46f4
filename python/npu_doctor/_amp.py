"""amp-check: one run in low precision with every aten op mirrored on fp32 shadow tensors
(docs/formats/amp.md, docs/amp-check.md "Shadow execution (the shim side)").

Per op, in the recorder's dispatch mode:
  1. plan: the op's precision (autocast lists, level, the inputs' precision), its inputs'
     shadows, and whether the fast path applies (every input's shadow is the real tensor
     and the op runs exactly in fp32: the result is its own shadow, nothing to mirror);
  2. the real op: emulated low precision on CPU (round in, fp32 compute, round out), or as
     the device's real autocast ran it;
  3. the shadow op on the fp32 shadows (dtype arguments made fp32), and for low-precision
     ops the local run (the op in low precision on the shadows' exact inputs); random ops
     replay the real op's draws and leave the program's RNG where the real op left it;
  4. the record: `local` and `drift` metrics on the first floating output.
Shadow and local ops run inside __torch_dispatch__, where the mode is off: they are
neither recorded nor mirrored. The shadow restarts from the real state at every step
(the map is cleared at each step end), so drift is the error of one step.
"""

import json
import os
import sys
import weakref

import torch

from . import _amp_attention
from ._advice import advice
from . import _amp_emulate as em
from . import _amp_metrics as amp_metrics
from ._amp_grads import AmpApiPatches, grad_histogram, optimizer_grads
from ._amp_metrics import differs, identity_metrics, metric_dtype, metrics, metrics_json
from ._amp_policy import FP32, LOWER, OpInfo, OpLists
from ._amp_shadow import ShadowMap
from ._dispatch import call_op, plain_tensor
from ._errors import pass_on, pass_on_async

DTYPES = {"fp16": torch.float16, "float16": torch.float16, "half": torch.float16,
          "bf16": torch.bfloat16, "bfloat16": torch.bfloat16}
F32 = torch.float32


class AmpConfig:
    def __init__(self, dtype="fp16", level="O1", emulate=None, lists=None, lists_name=None):
        d = DTYPES.get(str(dtype).lower().replace("torch.", ""))
        if d is None:
            raise ValueError("amp dtype must be fp16 or bf16, got %r" % (dtype,))
        level = str(level).upper()
        if level not in ("O1", "O2"):
            raise ValueError("amp level must be O1 or O2, got %r" % (level,))
        self.dtype = d
        self.dtype_name = str(d).replace("torch.", "")
        self.level = level
        self.emulate = emulate          # None: decided from the device when recording starts
        if lists is None:
            self.lists = OpLists.builtin()
        elif isinstance(lists, OpLists):
            self.lists = lists
        else:
            self.lists = OpLists.from_file(lists, lists_name)

    @classmethod
    def from_env(cls, env=None):
        env = os.environ if env is None else env
        emulate = env.get("NPUD_AMP_EMULATE", "").strip()
        lists = env.get("NPUD_AMP_LISTS") or None
        return cls(env.get("NPUD_AMP", "fp16"), env.get("NPUD_AMP_LEVEL", "O1") or "O1",
                   None if emulate == "" else emulate not in ("0", "false", "no"),
                   lists, env.get("NPUD_AMP_LISTS_NAME") or None)


class _Plan:
    __slots__ = ("func", "facts", "args", "kwargs", "info", "site", "lowp", "fast", "mutated", "shadow_args",
                 "shadow_kwargs", "rng_pre", "gens", "inputs", "calls", "container")


def _computes(info, inputs, outs):
    """Whether the op computes values of its own in low precision: not a copy that keeps the
    dtype (clone, contiguous, same-dtype _to_copy: only the inputs' rounding shows in it)."""
    if not info.moves_data:
        return True
    dtypes = {t.dtype for t in inputs if isinstance(t, torch.Tensor)}
    return any(isinstance(o, torch.Tensor) and o.dtype not in dtypes for o in outs)


class AmpSession:
    def __init__(self, config, collect=False):
        self.config = config
        self.rec = None
        self.shadows = ShadowMap()
        self.records = [] if collect else None
        self.own_autocast = False
        self._infos = {}
        self._device = "cpu"
        self._mdtype = torch.float64
        self._in_optimizer = False
        self._autocast = None
        self._api = AmpApiPatches(self)
        self._scaled = None            # loss scale of this step's GradScaler.scale, or None
        self._unscaled = set()         # id() of optimizers unscale_d this step
        self.autocast_depth = 0        # the program's own enabled autocast regions open now
        self._optimizers = []          # weakrefs to the optimizers made or stepped: their params' .grad
        self._grads = {}               # param.grad's data_ptr() -> param, as of backward pass _grads_at
        self._grads_at = -1
        self._sites = {}               # (op, caller code, line, module) -> [calls this step, unmeasured]

    # --- recorder hooks ----------------------------------------------------------------
    def attach(self, rec):
        self.rec = rec

    def header_args(self):
        self._resolve_device()
        return {"mode": "amp-check",
                "amp": {"dtype": self.config.dtype_name, "level": self.config.level,
                        "emulated": bool(self.config.emulate),
                        "metric_dtype": "float32",
                        "lists": self.config.lists.description}}

    def on_begin(self):
        self._resolve_device()
        self._api.install()
        if not self.config.emulate:
            self.own_autocast = True
            try:
                self._autocast = torch.autocast(device_type=self._device, dtype=self.config.dtype)
                self._autocast.__enter__()
            finally:
                self.own_autocast = False

    def on_end(self):
        self._api.remove()
        amp_metrics.scratch.release()
        ac, self._autocast = self._autocast, None
        if ac is not None:
            try:
                ac.__exit__(None, None, None)
            except Exception as e:
                pass_on(e)

    def on_step_end(self):
        self.shadows.clear()
        self._sites = {}
        self._in_optimizer = False
        self._scaled = None
        self._unscaled = set()

    def note_optimizer(self, optimizer):
        if not any(r() is optimizer for r in self._optimizers):
            self._optimizers.append(weakref.ref(optimizer))

    def before_optimizer_step(self, optimizer, closure=False):
        """`closure`: the step was given one (LBFGS, Lightning's automatic optimization): the
        forward and backward run inside it, so the gradients exist only after it ran
        (closure_returned reads them then)."""
        rec = self.rec
        if rec is None or not rec.recording:
            return
        if closure:
            self._in_optimizer = True
            return
        with rec.shim_ops():
            self.on_optimizer_step(optimizer)

    def closure_called(self):
        """The program's closure runs inside optimizer.step(): its forward and backward are the
        model's, in low precision as without a closure (issue 41: Lightning's steps ran all in
        fp32). Returns what closure_returned needs."""
        inside, self._in_optimizer = self._in_optimizer, False
        return inside

    def closure_returned(self, optimizer, inside, first):
        """Back in the optimizer's own math; the first closure call of a step has made the
        gradients the histogram reads."""
        self._in_optimizer = inside
        rec = self.rec
        if first and inside and rec is not None and rec.recording:
            with rec.shim_ops():
                self.on_optimizer_step(optimizer)

    def after_optimizer_step(self):
        self._in_optimizer = False

    def on_optimizer_step(self, optimizer):
        """Before the program's optimizer.step() runs: the gradient histogram, and the
        optimizer's own math runs in fp32 (fp32 master weights, as apex/torch_npu O2 keep)."""
        rec = self.rec
        if rec is None or not rec.recording:
            return
        self._in_optimizer = True
        grads = optimizer_grads(optimizer)
        scale = None
        if self._scaled and id(optimizer) not in self._unscaled:
            scale = self._scaled
        shadow_grads = [self.shadows.shadow(g)[0] for g in grads]
        h = grad_histogram(shadow_grads, scale)
        h["step"] = rec.step
        h["scaled"] = self._scaled is not None
        h["loss_scale"] = self._scaled
        h["source"] = "shadow"
        rec.write_instant("amp_grad", "grad_histogram", h)

    def on_scaler_call(self, method, scaler, args, scale_before):
        if method == "scale" and scale_before is not None:
            self._scaled = scale_before
        elif method == "unscale_" and args:
            self._unscaled.add(id(args[0]))

    def write_api_event(self, name, t0, frame, args):
        self.rec.write_api("amp_api", name, t0, frame, args)

    def _resolve_device(self):
        rec = self.rec
        npu = getattr(torch, "npu", None)   # torch_npu's module (or another PrivateUse1 backend named npu)
        device = "cpu"
        try:
            if npu is not None and npu.is_available():
                device = "npu"
            elif torch.cuda.is_available():
                device = "cuda"
        except Exception as e:
            pass_on_async(e)
        self._device = device
        self._mdtype = metric_dtype(device)
        if self.config.emulate is None:
            self.config.emulate = device == "cpu"
        if not self.config.emulate and device == "cpu" and self.config.dtype == torch.float16:
            if rec is not None:
                sys.stderr.write(advice("amp-check", "cpu_fp16_emulated") + "\n")
            self.config.emulate = True

    # --- per op ------------------------------------------------------------------------
    def count_call(self, func, site):
        """Counts a call of `func` from this site (caller line and module) in this step;
        returns how many calls its record stands for, or 0 when this one is not measured.
        Calls 1-4 and each power of two are: a loop over time steps (an LSTMCell, a decoder)
        measures its first iterations and then ever sparser ones, so the capture and the
        metric cost grow with the distinct ops, not with every call, and late drift still
        shows."""
        key = (func, site.key())
        counts = self._sites.get(key)
        if counts is None:
            self._sites[key] = [1, 0]
            return 1
        counts[0] += 1
        c = counts[0]
        if c <= 4 or not (c & (c - 1)):
            calls, counts[1] = counts[1] + 1, 0
            return calls
        counts[1] += 1
        return 0

    def plan(self, func, facts, args, kwargs, site, expand):
        """How this op runs and is mirrored (_Plan). `expand`: the dispatch core runs its
        composite kernel, whose inner ops come back here one by one and are mirrored there:
        the op itself only passes their shadows on."""
        info = self._infos.get(func)
        if info is None:
            info = OpInfo(func, self.config.lists)
            self._infos[func] = info
        p = _Plan()
        p.func, p.facts, p.args, p.kwargs, p.info, p.site = func, facts, args, kwargs, info, site
        p.calls = self.count_call(func, site)
        inputs = em.input_tensors(args, kwargs)
        p.inputs = inputs
        p.rng_pre = None
        p.gens = None
        p.container = expand or not all(plain_tensor(t, True) for t in inputs)
        if p.container or info.undefined:   # nothing of its own to mirror: its outputs' shadows are the real ones
            # (sparse, quantized and subclass tensors: their ops run as the program runs them,
            # and amp-check computes nothing on them: a wrapper subclass would see its ops)
            p.fast, p.lowp, p.mutated = True, False, []
            return p
        smap = self.shadows
        mutated = []
        for m in info.mutated:
            t = args[m] if isinstance(m, int) and m < len(args) else kwargs.get(m) if isinstance(m, str) else None
            if isinstance(t, torch.Tensor):
                mutated.append(t)
        p.mutated = mutated
        p.lowp = self._decide_lowp(info, inputs, mutated)
        aliased = True
        for t in inputs:
            if not smap.shadow(t)[1]:
                aliased = False
                break
        p.fast = aliased and not p.lowp and not em.has_lowp_dtype_arg(args, kwargs)
        if p.fast:
            return p
        for t in mutated:     # copy-on-write before the real op writes
            smap.separate(t)
        shadow_of = {}
        for t in inputs:
            shadow_of[id(t)] = smap.shadow(t)[0]
        p.shadow_args, p.shadow_kwargs = em.map_args(args, kwargs, lambda t: shadow_of[id(t)], em.to_fp32_dtype)
        if info.rng:
            p.gens = em.explicit_generators(args, kwargs)
            p.rng_pre = em.rng_save(p.gens)
        return p

    def _decide_lowp(self, info, inputs, mutated):
        if not self.config.emulate:
            return False   # decided by the real run's dtypes
        if self._in_optimizer or info.is_view:
            return False
        smap = self.shadows

        # A parameter's .grad is fp32 under real autocast (the parameter is; the backward of its
        # fp16 copy casts the gradient up): ops on it after backward (clipping's mul_, norms)
        # run in fp32 there, whatever precision the op that made the gradient ran in.
        def lowp(t):
            return smap.is_lowp(t) and not self._is_param_grad(t)
        if mutated:   # an in-place op runs in the precision of the tensor it writes
            if self._accumulates_grad(mutated):
                return False   # autocast's parameters stay fp32, and so do their .grad sums
            return any(t.is_floating_point() and lowp(t) for t in mutated)
        floats = [t for t in inputs if t.is_floating_point()]
        if not floats:
            return False
        if self.config.level == "O2" or info.policy == LOWER:
            return True
        if info.policy == FP32:
            return False
        dims = [t for t in floats if t.dim() > 0] or floats   # 0-dim tensors lose type promotion ties
        return all(lowp(t) for t in dims)

    def run_real(self, p):
        if p.lowp and self.config.emulate:
            return em.run_lowp(p.func, p.args, p.kwargs, p.mutated, self.config.dtype, self.shadows.is_lowp,
                               lambda f, a, k: call_op(f, p.facts, a, k))
        return call_op(p.func, p.facts, p.args, p.kwargs)

    def mirror(self, p, out):
        """Registers the outputs' shadows; returns the `"numeric":{...}` args text, or "" for
        ops with no numerics of their own: views, ops whose output is undefined memory
        (empty*), composite ops whose inner ops were mirrored one by one, kernels whose
        fp32 shadow cannot be run the same way (they are resynchronised on the real values)."""
        if p.container:
            return ""
        smap = self.shadows
        info = p.info
        outs = em.flat_outputs(out)
        if not all(plain_tensor(o, True) for o in outs if isinstance(o, torch.Tensor)):
            return ""   # a sparse or subclass output (torch.sparse_coo_tensor): not measured
        input_ids = {id(t) for t in p.inputs}
        if p.fast:
            first = None
            for o in outs:
                if isinstance(o, torch.Tensor):
                    if id(o) not in input_ids:
                        smap.set_output(o, None, not info.is_view, False)
                    if first is None and o.is_floating_point():
                        first = o
            if first is None or info.moves_data or info.undefined or not p.calls:
                return ""
            m = identity_metrics(first)
            index = next(i for i, o in enumerate(outs) if o is first)
            return self.numeric(p, False, first, m, m, index)
        if info.attention is not None:
            return _amp_attention.mirror(self, p, outs)

        gens = p.gens or []
        post = em.rng_save(gens) if p.rng_pre is not None else None
        try:
            # The local run first: an in-place op writes into its shadow input, and the local
            # run must start from that input as it was (else leaky_relu_ runs twice on it).
            lowp = p.lowp if self.config.emulate else self._real_lowp(outs)
            local_out = None
            if lowp and p.calls and _computes(info, p.inputs, outs):   # an unmeasured call needs only the shadow
                if post is not None:
                    em.rng_restore(p.rng_pre)
                local_out = self._run_local(p)
            if post is not None:
                em.rng_restore(p.rng_pre)
            shadow_out = call_op(p.func, p.facts, p.shadow_args, p.shadow_kwargs)
        except Exception as e:
            pass_on_async(e)
            # A kernel with no fp32 path (a device-only fused kernel): its shadow restarts from
            # the real values; nothing is measured for it.
            self.rec.note_once("amp-shadow:" + info.name, advice("amp-check", "no_fp32_path", op=info.name,
                                                                 error=type(e).__name__, message=e))
            self.resync(outs, input_ids)
            return ""
        finally:
            if post is not None:
                em.rng_restore(post)
        souts = em.flat_outputs(shadow_out)
        louts = em.flat_outputs(local_out) if local_out is not None else None
        first = None
        for i, o in enumerate(outs):
            if not isinstance(o, torch.Tensor):
                continue
            so = souts[i] if i < len(souts) else None
            if not isinstance(so, torch.Tensor) or so.shape != o.shape:
                so = None     # shadow lost (data-dependent shape): resync on the real values
                if id(o) not in input_ids:
                    smap.set_output(o, None if o.dtype == F32 else em.tensor_to(o.detach(), F32), True, False)
                continue
            if id(o) not in input_ids:
                out_lowp = lowp if self.config.emulate else o.dtype in em.LOWP_DTYPES
                smap.set_output(o, so, not info.is_view, out_lowp)
            if first is None and o.is_floating_point():
                first = (i, o, so)
        if first is None or not p.calls or (info.moves_data and not _computes(info, p.inputs, outs)):
            return ""   # a view or a copy has no numerics of its own: its input's record says it
        i, o, so = first
        drift = metrics(so, o, self._mdtype)
        if info.moves_data and not differs(drift):
            return ""
        if louts is not None and i < len(louts) and isinstance(louts[i], torch.Tensor) \
                and louts[i].shape == so.shape:
            local = metrics(so, louts[i], self._mdtype)
        else:
            local = identity_metrics(so)
        return self.numeric(p, lowp, o, local, drift, i)

    def resync(self, outs, input_ids=()):
        """The outputs' shadows restart from their real values (upcast to fp32)."""
        smap = self.shadows
        for o in outs:
            if isinstance(o, torch.Tensor) and id(o) not in input_ids:
                smap.set_output(o, None if o.dtype == F32 or not o.is_floating_point()
                                else em.tensor_to(o.detach(), F32), True, False)

    def _accumulates_grad(self, mutated):
        """The op writes into a parameter's .grad (AccumulateGrad). torch >= 2.1 names the
        node; on 1.x: a backward-pass write into a .grad of the optimizers' parameters."""
        links = self.rec.links if self.rec is not None else None
        back = links.backward_of() if links is not None else None
        if back is None:
            return False
        if back[0] == "AccumulateGrad":
            return True
        if back[0]:
            return False   # another backward node
        grads = set()
        for ref in self._optimizers:
            opt = ref()
            for g in (opt.param_groups if opt is not None else ()):
                for param in g["params"]:
                    if param.grad is not None:
                        grads.add(id(param.grad))
        return any(id(t) in grads for t in mutated)

    def _is_param_grad(self, t):
        """t is the .grad of a parameter of the program's optimizers, or a view of all of it
        (torch 1.x's clip_grad_norm_ scales `p.grad.detach()`): found by the gradient's memory
        and checked against the parameter's .grad now (a freed gradient's memory may hold a
        forward tensor by then)."""
        links = self.rec.links if self.rec is not None else None
        passes = links.backward_passes if links is not None else 0
        if passes != self._grads_at:   # gradients are made by backward passes: read them once after each
            self._grads_at = passes
            self._grads = {}
            for ref in self._optimizers:
                opt = ref()
                for g in (opt.param_groups if opt is not None else ()):
                    for param in g["params"]:
                        if param.grad is not None:
                            self._grads[_data_ptr(param.grad)] = param
        ptr = _data_ptr(t)
        param = self._grads.get(ptr) if ptr else None
        grad = param.grad if param is not None else None
        return grad is not None and _data_ptr(grad) == ptr and grad.shape == t.shape

    def _real_lowp(self, outs):
        for o in outs:
            if isinstance(o, torch.Tensor) and o.dtype in em.LOWP_DTYPES:
                return True
        return False

    def _run_local(self, p):
        """The op on the shadows' exact inputs, in the precision the real op ran in."""
        written = {id(t) for t in p.mutated}
        clones = {}

        def fresh(real, shadow):
            if id(real) in written:
                c = shadow.clone()
                clones[id(real)] = c
                return c
            return shadow

        real_inputs = p.inputs
        shadow_inputs = em.input_tensors(p.shadow_args, p.shadow_kwargs)
        pairs = {id(r): fresh(r, s) for r, s in zip(real_inputs, shadow_inputs)}
        if self.config.emulate:
            args, kwargs = em.map_args(p.args, p.kwargs, lambda t: pairs[id(t)], em.to_fp32_dtype)
            mutated = [clones[id(t)] for t in p.mutated if id(t) in clones]
            for c in mutated:
                if c.dtype == F32:
                    c.copy_(em.round_to(c, self.config.dtype))
            return em.run_lowp(p.func, args, kwargs, mutated, self.config.dtype, lambda t: False,
                               lambda f, a, k: call_op(f, p.facts, a, k))
        # real autocast: each input in the dtype the real op got it in
        dtypes = {id(r): r.dtype for r in real_inputs}
        args, kwargs = em.map_args(
            p.args, p.kwargs,
            lambda t: em.tensor_to(pairs[id(t)], dtypes[id(t)]) if t.is_floating_point() else pairs[id(t)])
        return self.call(p, args, kwargs)

    @property
    def mdtype(self):
        """The dtype metrics are computed in on this device."""
        return self._mdtype

    def call(self, p, args, kwargs):
        """The planned op on other arguments (a local run), called as the dispatch core calls it."""
        return call_op(p.func, p.facts, args, kwargs)

    def numeric(self, p, lowp, out, local, drift, index, ref=None):
        dtype = self.config.dtype_name if (lowp and self.config.emulate) else str(out.dtype).replace("torch.", "")
        text = ('"numeric":{"lowp":%s,"dtype":"%s",%s%s%s%s"local":%s,"drift":%s}'
                % ("true" if lowp else "false", dtype, ('"out":%d,' % index) if index else "",
                   ('"calls":%d,' % p.calls) if p.calls > 1 else "",
                   '"autocast":true,' if self.autocast_depth > 0 else "",
                   ('"ref":"%s",' % ref) if ref else "",
                   metrics_json(local), metrics_json(drift)))
        if self.records is not None:
            self.records.append(OpRecord(p.facts.name, self.rec.step, lowp, dtype, local, drift,
                                         self.rec.site_stack(p.site)))
        return text


def _data_ptr(t):
    """The tensor's memory address, or 0 for one without storage (sparse, meta)."""
    try:
        return t.data_ptr()
    except Exception as e:
        pass_on_async(e)
        return 0


class OpRecord:
    """One op's numeric record (the in-code API's view of an `aten` event)."""
    __slots__ = ("name", "step", "lowp", "dtype", "local", "drift", "_stack")

    def __init__(self, name, step, lowp, dtype, local, drift, stack_json):
        self.name, self.step, self.lowp, self.dtype = name, step, lowp, dtype
        self.local, self.drift, self._stack = local, drift, stack_json

    @property
    def stack(self):
        return [tuple(f) for f in json.loads(self._stack)]

    def __repr__(self):
        return "OpRecord(%s, lowp=%s, local.max_rel=%.3g, drift.max_rel=%.3g, overflow=%d)" % (
            self.name, self.lowp, self.local["max_rel"], self.drift["max_rel"], self.local["overflow"])


# --- in-code API -----------------------------------------------------------------------------

class AmpResult:
    """What npu_doctor.amp_check returns: `records` (one OpRecord per recorded op with a
    floating output, in order), `output` (the low-precision run's result), `shadow_output`
    (its fp32 shadow), `loss`/`shadow_loss` when a loss_fn ran, and `path`."""

    def __init__(self, records, output, shadow_output, loss, shadow_loss, path, header):
        self.records = records
        self.output = output
        self.shadow_output = shadow_output
        self.loss = loss
        self.shadow_loss = shadow_loss
        self.path = path
        self.header = header

    def first(self, predicate):
        for r in self.records:
            if predicate(r):
                return r
        return None

    @property
    def first_overflow(self):
        return self.first(lambda r: r.local["overflow"] > 0 or r.drift["overflow"] > 0)


def amp_check(model, inputs, dtype="fp16", level="O1", path=None, lists=None, loss_fn=None, emulate=None):
    from ._recorder import Recorder
    if isinstance(inputs, torch.Tensor) or not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    if lists is None and os.environ.get("NPUD_AMP_LISTS"):
        lists = os.environ["NPUD_AMP_LISTS"]
    config = AmpConfig(dtype, level, emulate, lists)
    session = AmpSession(config, collect=True)
    rec = Recorder(path or os.devnull, None, amp=session)
    rec.start()
    output = loss = shadow_output = shadow_loss = None
    try:
        output = model(*inputs)
        shadow_output = _shadow_of(session, output)
        if loss_fn is not None:
            loss = loss_fn(output)
            shadow_loss = _shadow_of(session, loss)
            loss.backward()
    finally:
        try:
            rec.finish("stopped")
        except Exception as e:
            pass_on(e)
            sys.stderr.write("npu-doctor: amp_check not closed cleanly: %s\n" % e)
    return AmpResult(session.records, output, shadow_output, loss, shadow_loss, path, session.header_args())


def _shadow_of(session, out):
    def one(t):
        s, aliased = session.shadows.shadow(t)
        return s.detach().clone() if not aliased else t.detach().clone()

    try:
        with session.rec.shim_ops():
            return em.map_outputs(out, one)
    except Exception as e:
        pass_on_async(e)
        return None


def session_from_env(env=None):
    return AmpSession(AmpConfig.from_env(env))
