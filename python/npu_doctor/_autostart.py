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
"""

import os
import sys

DEFAULT_STEPS = "1:3"


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
    try:
        rank = _rank()
        path, exclusive = _claim_capture_path(path) if rank is None else _rank_capture_path(path, rank)
        import npu_doctor
        from ._recorder import Recorder
        from ._steps import parse_steps
        try:
            steps = parse_steps(os.environ.get("NPUD_STEPS", DEFAULT_STEPS))
        except ValueError as e:
            sys.stderr.write("npu-doctor: %s; recording steps %s\n" % (e, DEFAULT_STEPS))
            steps = parse_steps(DEFAULT_STEPS)
        fault = int(os.environ.get("NPUD_TEST_FAULT", "0") or 0)
        amp = None
        if os.environ.get("NPUD_AMP"):
            from ._amp import session_from_env
            amp = session_from_env()
        rec = Recorder(path, steps, exclusive=exclusive, fault_at=fault, amp=amp)
        # `run` at a terminal: one line when recording starts and one when it is done (rank 0 only)
        rec.status = bool(os.environ.pop("NPUD_STATUS", "")) and rank in (None, 0)
        rec.start()
        npu_doctor._current[0] = rec
        dump = os.environ.pop("NPUD_DUMP", None)
        if dump:
            from ._dump import start_dump
            start_dump(rec, dump, os.path.join(os.path.dirname(os.path.abspath(path)), "dump"))
    except Exception as e:   # never raise into the program
        sys.stderr.write("npu-doctor: capture not started: %s: %s\n" % (type(e).__name__, e))


class _TorchImportWatcher:
    """A meta-path finder that only watches for `torch` and runs the capture after the real
    loader finished executing torch/__init__.py. It stays armed until torch really loads: a
    library asking whether torch is there (`importlib.util.find_spec("torch")`, as
    transformers' is_torch_available() does) finds the spec without loading it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch":
            return None
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            _remove_watcher()
            real_exec(module)
            _start_capture()

        try:
            spec.loader.exec_module = exec_module
        except Exception:
            pass
        return spec


_watcher = _TorchImportWatcher()


def _remove_watcher():
    try:
        sys.meta_path.remove(_watcher)
    except ValueError:
        pass


def install():
    if not os.environ.get("NPUD_CAPTURE"):
        return
    if "torch" in sys.modules:
        _start_capture()
    else:
        sys.meta_path.insert(0, _watcher)
