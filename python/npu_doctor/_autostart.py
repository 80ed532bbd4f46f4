"""Starts a capture from the environment (set by `npu-doctor run`), without importing torch
early: the recorder starts right after the program's own `import torch` finished.

    NPUD_CAPTURE=path     capture file to create (the variable is removed for the children
                          of the process that captures; processes that inherited it before,
                          e.g. two workers of one shell line, each write their own file:
                          the first to start gets `path`, the others <name>.<pid>.npud.json
                          beside it, see _claim_capture_path). A worker of a distributed
                          launch (RANK set: torchrun, accelerate, deepspeed) writes
                          <name>.rank<RANK>.npud.json; the launcher itself captures nothing
                          and leaves the variable to its workers (_is_launcher).
    NPUD_STEPS=A:B        steps to record, inclusive (default 1:3)
    NPUD_TEST_FAULT=N     test hook: an internal error at the Nth recorded event
    NPUD_DUMP=SELECT      also dump the selected tensors of the recorded steps to
                          <capture dir>/dump/ (docs/formats/dump.md)
    NPUD_AMP=fp16|bf16    amp-check mode (with NPUD_AMP_LEVEL, NPUD_AMP_EMULATE,
                          NPUD_AMP_LISTS: docs/formats/amp.md)

The process that captures removes these variables from its environment once read: its
children neither capture nor see them (issue 42).

The bootstrap loads this package under a private name (_npu_doctor_shim), so that a
program's own module named npu_doctor stays the program's; `import npu_doctor` gives the
running shim only to a program that has none (_PublicName).
"""

import importlib.util
import os
import sys

DEFAULT_STEPS = "1:3"
PUBLIC_NAME = "npu_doctor"
# What `run` and `amp-check` set for the process that captures, besides NPUD_CAPTURE.
_SETTINGS = ("NPUD_STEPS", "NPUD_STATUS", "NPUD_DUMP", "NPUD_TEST_FAULT", "NPUD_AMP", "NPUD_AMP_LEVEL",
             "NPUD_AMP_EMULATE", "NPUD_AMP_LISTS", "NPUD_AMP_LISTS_NAME")


# The programs that start a distributed job's workers: they import torch but run no step, and
# their workers must inherit NPUD_CAPTURE. Console scripts by file name; `python -m` launchers
# by module name.
_LAUNCHERS = {"torchrun", "accelerate", "deepspeed"}
_LAUNCHER_MODULES = {"torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch",
                     "accelerate.commands.accelerate_cli", "deepspeed.launcher.runner"}


def _module_run_by_m():
    """The module of `python -m MODULE`, or None. torch is imported while runpy still looks the
    module up, before it sets sys.argv[0] (then still '-m'): the command line says it. Options
    before -m may take a value (`-X dev`, `-W ignore`): _interpreter knows which."""
    argv = getattr(sys, "orig_argv", None)
    if argv is None:
        try:
            with open("/proc/self/cmdline", "rb") as f:
                argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0")[:-1]]
        except OSError:
            return None
    from ._interpreter import program_start
    start = program_start(argv)
    return start[1] if start is not None and start[0] == "-m" else None


def _is_launcher(argv0):
    if argv0 in ("-m", "") or argv0.endswith(".py"):
        module = _module_run_by_m()
        if module is not None:
            return module in _LAUNCHER_MODULES
    return os.path.basename(argv0) in _LAUNCHERS or any(
        argv0.endswith(os.path.join(*m.split(".")) + ".py") for m in _LAUNCHER_MODULES)


def _rank():
    """The worker's global rank as the launcher set it (RANK), or None."""
    rank = os.environ.get("RANK", "")
    return int(rank) if rank.isdigit() else None


def _claim_capture_path(path):
    """(path to write, whether to create it exclusively). Several processes of one `npu-doctor
    run` may inherit NPUD_CAPTURE (a shell line or a launcher that starts workers before any of
    them imports torch): each writes its own file, never one file at once (issue 31 F-7). The
    first claims `path` by creating it exclusively; the others take `<name>.<pid>.npud.json`
    beside it, which `run` lists in its report."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        return path, False          # ours, empty: the writer truncates it
    except FileExistsError:
        pass
    return _beside(path, str(os.getpid())), True


def _beside(path, tag):
    """<name>.<tag>.npud.json beside path."""
    folder, name = os.path.split(path)
    stem = name[:-len(".npud.json")] if name.endswith(".npud.json") else name
    return os.path.join(folder, "%s.%s.npud.json" % (stem, tag))


def _rank_capture_path(path, rank):
    """(path, exclusive) for the worker of rank `rank`: <name>.rank<R>.npud.json, claimed like
    path itself; a second process with the same RANK (a restarted worker) takes its pid's name."""
    return _claim_capture_path(_beside(path, "rank%d" % rank))


def _start_capture():
    if _is_launcher(sys.argv[0] if sys.argv else ""):
        return   # NPUD_CAPTURE stays set: the workers it starts capture
    path = os.environ.pop("NPUD_CAPTURE", None)
    if not path:
        return
    settings = {name: os.environ.pop(name) for name in _SETTINGS if name in os.environ}
    try:
        rank = _rank()
        path, exclusive = _claim_capture_path(path) if rank is None else _rank_capture_path(path, rank)
        from . import _current
        from ._recorder import Recorder
        from ._steps import parse_steps
        try:
            steps = parse_steps(settings.get("NPUD_STEPS", DEFAULT_STEPS))
        except ValueError as e:
            sys.stderr.write("npu-doctor: %s; recording steps %s\n" % (e, DEFAULT_STEPS))
            steps = parse_steps(DEFAULT_STEPS)
        fault = int(settings.get("NPUD_TEST_FAULT", "0") or 0)
        amp = None
        if settings.get("NPUD_AMP"):
            from ._amp import session_from_env
            amp = session_from_env(settings)
        rec = Recorder(path, steps, exclusive=exclusive, fault_at=fault, amp=amp)
        # `run` at a terminal: one line when recording starts and one when it is done (rank 0 only)
        rec.status = bool(settings.get("NPUD_STATUS", "")) and rank in (None, 0)
        rec.start()
        _current[0] = rec
        dump = settings.get("NPUD_DUMP")
        if dump:
            from ._dump import start_dump
            start_dump(rec, dump, os.path.join(os.path.dirname(os.path.abspath(path)), "dump"))
    except Exception as e:   # never raise into the program (its own exceptions excepted)
        from ._errors import pass_on
        pass_on(e)
        sys.stderr.write("npu-doctor: capture not started: %s: %s\n" % (type(e).__name__, e))


def _spec_elsewhere(me, fullname, path, target):
    """The spec the meta-path finders other than `me` give for `fullname` (what the import
    would find without `me`), or None."""
    for finder in list(sys.meta_path):
        find = getattr(finder, "find_spec", None)
        if finder is me or find is None:
            continue
        spec = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


class _TorchImportWatcher:
    """A meta-path finder that only watches for `torch` and runs the capture after the real
    loader finished executing torch/__init__.py. It stays armed until torch really loads: a
    library asking whether torch is there (`importlib.util.find_spec("torch")`, as
    transformers' is_torch_available() does) finds the spec without loading it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        spec = _spec_elsewhere(self, fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            _remove_watcher()
            real_exec(module)
            _start_capture()

        try:
            spec.loader.exec_module = exec_module
        except Exception as e:
            from ._errors import pass_on
            pass_on(e)
        return spec


_watcher = _TorchImportWatcher()


def _remove_watcher():
    try:
        sys.meta_path.remove(_watcher)
    except ValueError:
        pass


class _PublicName:
    """A meta-path finder for `npu_doctor` and its submodules (issue 42 F-15). What the program
    would import without the shim stays what it imports: its own npu_doctor.py beside it, any
    module of that name on its path. Only a program that has none, or finds another copy of
    this package there (a pip install), gets the running shim, so that its
    `npu_doctor.step()` calls mark the capture's steps."""

    def find_spec(self, fullname, path=None, target=None):
        shim = sys.modules[__package__]
        if fullname == PUBLIC_NAME:
            theirs = _spec_elsewhere(self, fullname, path, target)
            if theirs is not None and not _stands_for_the_shim(theirs):
                return theirs
            return importlib.util.spec_from_loader(fullname, _Alias(shim), is_package=True)
        if fullname.startswith(PUBLIC_NAME + ".") and sys.modules.get(PUBLIC_NAME) is shim:
            module = importlib.import_module(__package__ + fullname[len(PUBLIC_NAME):])
            return importlib.util.spec_from_loader(fullname, _Alias(module), is_package=hasattr(module, "__path__"))
        return None


def _stands_for_the_shim(spec):
    """A copy of this package (its bootstrap beside it), or a bare folder named npu_doctor (a
    namespace package, no module of the program's): `import npu_doctor` gets the shim."""
    if spec.origin is None or spec.loader is None:
        return True
    return any(os.path.isfile(os.path.join(folder, "_bootstrap", "sitecustomize.py"))
               for folder in spec.submodule_search_locations or ())


class _Alias:
    """The loader of a module that already runs under another name: the import gives that
    module, whose own __spec__ (its real name, which its relative imports use) stays."""

    def __init__(self, module):
        self._module = module
        self._spec = module.__spec__

    def create_module(self, spec):
        return self._module

    def exec_module(self, module):
        module.__spec__ = self._spec   # the import system set the alias's


def _expose_public_name():
    if __package__ != PUBLIC_NAME and not any(isinstance(f, _PublicName) for f in sys.meta_path):
        sys.meta_path.insert(0, _PublicName())


def install():
    """Called by the bootstrap at start-up."""
    _expose_public_name()
    if not os.environ.get("NPUD_CAPTURE"):
        return
    if "torch" in sys.modules:
        _start_capture()
    else:
        sys.meta_path.insert(0, _watcher)
