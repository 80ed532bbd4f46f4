"""What the capture header says about the running program's environment: working directory,
installed packages it imported and their versions, the accelerator it can use.
"""

import os
import sys

from ._errors import pass_on


def cwd():
    try:
        return os.getcwd()
    except OSError as e:
        pass_on(e)
        return ""


def installed_packages():
    """{top-level package: version} of the installed packages the program imported (their
    frames are library code in findings, named with the version that ran)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if "." in name or name.startswith("_") or module is None:
            continue
        path = getattr(module, "__file__", None) or ""
        if os.sep + "site-packages" + os.sep not in path and os.sep + "dist-packages" + os.sep not in path:
            continue
        version = installed_version(name) or installed_version(name.replace("_", "-"))
        if version:
            found[name] = version
    return found


def installed_version(dist):
    """The installed distribution's version without importing it ("" when absent): the
    torch_npu wheel a CPU-only run would deploy with picks the op list to check against."""
    try:
        from importlib import metadata
        return metadata.version(dist)
    except Exception as e:
        pass_on(e)
        return ""


def guess_device(torch, npu):
    """The accelerator the program can use: torch_npu's torch.npu (or another PrivateUse1
    backend named npu), CUDA, else the CPU."""
    try:
        npu_module = getattr(torch, "npu", None) if torch is not None else None
        if npu_module is not None and npu_module.is_available():
            return "npu"
        if torch is not None and torch.cuda.is_available():
            return "cuda"
    except Exception as e:
        pass_on(e)
    return "cpu"
