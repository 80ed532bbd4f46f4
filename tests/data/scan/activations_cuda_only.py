# A library module whose only CUDA test guards a CUDA-only kernel (transformers
# activations.py) for which no NPU kernel exists: that test is no finding (nothing to do), so
# no fix brings NPU APIs into the file and CUDA006 (`import torch_npu`) is not reported either:
# the module keeps importing without torch_npu. The file stays quiet.
import torch
from torch import nn


class XIELUActivation(nn.Module):
    def __init__(self):
        super().__init__()
        self._xielu_cuda_obj = None
        try:
            import xielu.ops  # noqa: F401

            self._xielu_cuda_obj = torch.classes.xielu.XIELU()
        except Exception:
            pass

    def _xielu_python(self, x):
        return torch.where(x > 0, x * x, torch.expm1(x) - x)

    def forward(self, input):
        if self._xielu_cuda_obj is not None and input.is_cuda:  # no finding: the test keeps CUDA-only code off the NPU and nothing else is to do (withheld)
            return self._xielu_cuda_obj.forward(input, self.alpha_p, self.alpha_n)
        return self._xielu_python(input)
