# CUDA005: cuDNN and CUDA math-backend settings, which the NPU does not read (info; only the
# TF32 switches have a fix), also through an alias.
import torch  # expect: CUDA006
import torch.backends.cudnn as cudnn

torch.backends.cudnn.benchmark = True  # expect: CUDA005
torch.backends.cudnn.deterministic = True  # expect: CUDA005
cudnn.benchmark = False  # expect: CUDA005
torch.backends.cuda.matmul.allow_tf32 = True  # expect: CUDA005
