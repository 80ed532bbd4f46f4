# Loaded by Python at start-up because `npu-doctor run` puts this directory first on
# PYTHONPATH. It arms the capture (which starts once the program imports torch), then runs
# the sitecustomize this one shadows, so the user's own start-up code still runs.
import os
import sys


def _npu_doctor_arm():
    here = os.path.dirname(os.path.abspath(__file__))
    package_parent = os.path.dirname(os.path.dirname(here))
    try:
        if package_parent not in sys.path:
            sys.path.append(package_parent)
        from npu_doctor import _autostart
        _autostart.install()
    except Exception as e:
        sys.stderr.write("npu-doctor: capture not armed: %s: %s\n" % (type(e).__name__, e))
    # Chain to the next sitecustomize on the path (Debian's, a venv's, the user's).
    saved_path = list(sys.path)
    this_module = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if getattr(e, "name", None) != "sitecustomize":
            sys.stderr.write("npu-doctor: the program's sitecustomize failed: %s\n" % e)
    except Exception as e:
        sys.stderr.write("npu-doctor: the program's sitecustomize failed: %s: %s\n" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved_path
        if this_module is not None:
            sys.modules.setdefault("sitecustomize", this_module)


_npu_doctor_arm()
del _npu_doctor_arm
