# CUDA006: the fixes bring NPU APIs into a file without `import torch_npu`; the import goes on
# the line after the first module-level `import torch`, not after one under TYPE_CHECKING.
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch as _torch_types
import torch  # expect: CUDA006

batch = torch.ones(2).cuda()  # expect: CUDA002
