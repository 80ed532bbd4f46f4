# Loaded by Python at start-up because `npu-doctor run` puts this directory first on
# PYTHONPATH. It arms the capture (which starts once the program imports torch), then runs
# the sitecustomize this one shadows, so the user's own start-up code still runs.
import importlib
import os
import sys


_NPU_DOCTOR_SHIM = "_npu_doctor_shim"


def _npu_doctor_load_package(package_dir):
    # Import this copy of npu_doctor by its location rather than by putting its parent folder
    # on sys.path: for a pip install that folder is a whole site-packages, which must not be
    # spliced into the path of whatever interpreter the program runs with. It runs under a
    # private name: `npu_doctor` may be the program's own module (npu_doctor.py beside it);
    # _autostart gives the name to the shim only when the program has none.
    if _NPU_DOCTOR_SHIM in sys.modules:
        return
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        _NPU_DOCTOR_SHIM, os.path.join(package_dir, "__init__.py"), submodule_search_locations=[package_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules[_NPU_DOCTOR_SHIM] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_NPU_DOCTOR_SHIM]
        raise


def _npu_doctor_arm():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        _npu_doctor_load_package(os.path.dirname(here))
        importlib.import_module(_NPU_DOCTOR_SHIM + "._autostart").install()
    except Exception as e:
        sys.stderr.write("npu-doctor: capture not armed: %s: %s\n" % (type(e).__name__, e))
    # Chain to the next sitecustomize on the path (Debian's, a venv's, the user's).
    saved_path = list(sys.path)
    this_module = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
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
del _npu_doctor_arm, _npu_doctor_load_package
