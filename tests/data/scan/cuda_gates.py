# CUDA001/CUDA003/CUDA007 in library code that runs a CUDA-only kernel behind a CUDA test
# (transformers activations.py, the Mamba/RWKV/YOSO models, MoE helpers, apex and triton
# kernels): the test is what keeps NPU tensors on the fallback, so its fix is withheld. Where an
# NPU kernel does what the CUDA branch does, the finding stays, without a fix ("no fix" below:
# add an NPU branch calling it); where none does, there is nothing to do and no finding ("no
# finding"). Tests in front of portable code keep their fix.
import torch  # expect: CUDA006
import torch.nn.functional as F
import triton
import triton.language as tl
from torch import nn

try:
    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
except ImportError:
    selective_scan_fn = None

lsh_cumulation = None
wkv_cuda_kernel = None


def load_cuda_kernels():
    global lsh_cumulation
    from kernels import get_kernel

    lsh_cumulation = get_kernel("kernels-community/yoso").lsh_cumulation


class XIELUActivation(nn.Module):
    """transformers activations.py: a CUDA extension object, used only for CUDA tensors."""

    def __init__(self, beta=0.5, eps=-1e-6):
        super().__init__()
        self._xielu_cuda_obj = None
        try:
            import xielu.ops  # noqa: F401

            self._xielu_cuda_obj = torch.classes.xielu.XIELU()
            self._xielu_cuda_fn = self._xielu_cuda
        except Exception:
            pass

    def _xielu_python(self, x):
        return torch.where(x > 0, x * x, torch.expm1(torch.min(x, self.eps)) - x)

    def _xielu_cuda(self, x):
        return self._xielu_cuda_obj.forward(x, self.alpha_p, self.alpha_n, self._beta_scalar, self._eps_scalar)

    def forward(self, input):
        if self._xielu_cuda_obj is not None and input.is_cuda:  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
            return self._xielu_cuda_fn(input)
        return self._xielu_python(input)


@triton.jit
def _rms_norm_fwd(X, Y, W, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    tl.store(Y + row * stride + cols, x * rstd * tl.load(W + cols, mask=cols < N), mask=cols < N)


def rms_norm(x, weight, eps=1e-6):
    if x.is_cuda:  # expect: CUDA007(no fix)
        y = torch.empty_like(x)
        _rms_norm_fwd[(x.shape[0],)](x, y, weight, x.stride(0), x.shape[-1], eps, BLOCK=1024)
        return y
    return F.rms_norm(x, x.shape[-1:], weight, eps)


def fused_layer_norm(x, weight, bias, eps):
    # apex: the import itself only works where CUDA does.
    if torch.cuda.is_available():  # expect: CUDA003(no fix)
        from apex.normalization.fused_layer_norm import fused_layer_norm_affine

        return fused_layer_norm_affine(x, weight, bias, x.shape[-1:], eps)
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps)


def layer_norm_cuda_or_torch(x, weight, bias, eps):
    if not x.is_cuda:  # expect: CUDA007(no fix)
        return F.layer_norm(x, x.shape[-1:], weight, bias, eps)
    import fused_layer_norm_cuda

    return fused_layer_norm_cuda.forward_affine(x, x.shape[-1:], weight, bias, eps)


class MambaMixer(nn.Module):
    def cuda_kernels_forward(self, hidden_states):
        return selective_scan_fn(hidden_states, self.A, self.B, self.C, self.D)

    def slow_forward(self, hidden_states):
        return torch.cumsum(hidden_states, dim=1)

    def forward(self, hidden_states):
        if self.fast_path and "cuda" in self.x_proj.weight.device.type:  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
            return self.cuda_kernels_forward(hidden_states)
        return self.slow_forward(hidden_states)


class WkvLinearAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, time_decay, key, value):
        if time_decay.device.type != "cuda" or key.device.type != "cuda":  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
            raise ValueError("Calling the CUDA kernel for wkv attention requires all tensors to be on CUDA devices.")
        output = torch.empty_like(key)
        forward_func = wkv_cuda_kernel.forward_bf16 if key.dtype == torch.bfloat16 else wkv_cuda_kernel.forward
        forward_func(time_decay, key, value, output)
        return output


def wkv_cpu(time_decay, key, value):
    return torch.cumsum(key * value, dim=1) * time_decay


def rwkv_linear_attention(time_decay, key, value):
    no_cuda = any(t.device.type != "cuda" for t in [time_decay, key, value])  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
    one_token = key.size(1) == 1
    if wkv_cuda_kernel is None or no_cuda or one_token:
        return wkv_cpu(time_decay, key, value)
    else:
        return WkvLinearAttention.apply(time_decay, key, value)


def yoso_cumulation(query_mask, query, key, value, config):
    use_cuda = query_mask.is_cuda  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
    return lsh_cumulation.fast_hash(query_mask, query, key, config["num_hash"], use_cuda, 1)


def grouped_mm_supported(weight):
    if weight.device.type == "cuda":  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
        return torch.cuda.get_device_capability(weight.device) >= (8, 0)  # expect: CUDA003
    return hasattr(torch, "_grouped_mm")


def msa_attention_check(query):
    # The CUDA-only call is in the test itself, evaluated once the device is CUDA.
    if query.device.type != "cuda" or torch.cuda.get_device_capability(query.device)[0] != 10:  # the CUDA001 test: no finding (withheld). # expect: CUDA003
        raise RuntimeError("MSA block-sparse attention requires an SM100 / Blackwell CUDA device.")
    return query


# Tests in front of portable code: fixed as before.
def to_device(batch, model):
    if next(model.parameters()).is_cuda:  # expect: CUDA007(fix)
        batch = batch.pin_memory()
    if torch.cuda.is_available():  # expect: CUDA003(fix)
        torch.cuda.synchronize()  # expect: CUDA003(fix)
    mode = "pointwise" if batch.device.type == "cuda" else "generic"  # expect: CUDA001(fix)
    cuda_devices = set()
    if batch.device.type == "cuda":  # expect: CUDA001(fix)
        cuda_devices.add(batch.device.index)
    return batch.to(model.device, non_blocking=batch.is_cuda), mode, cuda_devices  # expect: CUDA007(fix)
