"""Finds the user's frames on the Python stack: not torch's, not the shim's, not the stdlib's.

Classification is cached per code object, and each frame's JSON text per (code, offset),
because the stack is walked for every recorded op.
"""

import inspect
import json
import opcode
import os
import sys
import sysconfig
import weakref

MAX_FRAMES = 8
MAX_WALK = 256

_SHIM_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Packages whose frames are never the user's, wherever they are installed.
_LIBRARY_PACKAGES = ("torch", "torch_npu", "functorch", "torchgen")


def _stdlib_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib"):
        try:
            p = sysconfig.get_paths()[key]
        except Exception:
            continue
        if p:
            dirs.add(os.path.abspath(p) + os.sep)
    return tuple(dirs)


_STDLIB = _stdlib_dirs()
_SITE_MARKERS = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)
_library_dirs = []   # real install dirs of the packages above, added when known


def add_library_dir(path):
    if path:
        d = os.path.abspath(path) + os.sep
        if d not in _library_dirs:
            _library_dirs.append(d)
            _user_code.clear()
            _user_code.update((code, 0) for code in _never_users)


PACKAGE, PROGRAM = 1, 2   # frame kinds (0: not the user's)


def _is_user_file(filename):
    """0: torch, the shim, the standard library (never the user's); PACKAGE: an installed
    package's code, the nearest cause the user can see; PROGRAM: the program's own code."""
    if not filename or filename.startswith("<frozen"):
        return 0
    if filename.startswith("<"):
        return PROGRAM  # <string>, <stdin>: code the user typed
    path = os.path.abspath(filename)
    if path.startswith(_SHIM_DIR):
        return 0
    for d in _library_dirs:
        if path.startswith(d):
            return 0
    for marker in _SITE_MARKERS:
        i = path.find(marker)
        if i >= 0:
            top = path[i + len(marker):].split(os.sep, 1)[0]
            if top in _LIBRARY_PACKAGES:
                return 0
            return PACKAGE
    for d in _STDLIB:
        if path.startswith(d):
            return 0
    return PROGRAM


_user_code = {}      # code object -> frame kind (_is_user_file)
# (code object, instruction offset) -> '["file",line,"function"]': the offset is a plain
# read, the line a search of the code's line table (Python 3.11: a third of the walk).
_frame_json = {}


STACKS_PER_BOUNDARY = 32
# Generator and coroutine frames: one frame object, resumed from whichever caller comes next.
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

# Frames torch puts between a dispatch mode and the code that called the op, made afresh for
# each op: torch >= 2.1 wraps every __torch_dispatch__ in _disable_dynamo (two frames),
# torch 1.13 calls it through the mode stack's own __torch_dispatch__.
_WRAPPER_FILES = (os.sep + os.path.join("torch", "_compile.py"),
                  os.sep + os.path.join("torch", "_dynamo", "eval_frame.py"),
                  os.sep + os.path.join("torch", "utils", "_python_dispatch.py"))
_wrapper_code = {}   # code object -> bool


def dispatch_caller(frame):
    """The frame that called the op, from the frame that called __torch_dispatch__."""
    while frame is not None:
        code = frame.f_code
        wrapper = _wrapper_code.get(code)
        if wrapper is None:
            wrapper = _wrapper_code[code] = code.co_filename.endswith(_WRAPPER_FILES)
        if not wrapper:
            return frame
        frame = frame.f_back
    return frame


def new_boundary(frame):
    """A call (a module's forward, optimizer.step()) running from `frame`: [frame, the
    texts of its user frames (filled on first use), stacks of the frames that ran ops in it]."""
    return [frame, None, None]


def user_stack_json(frame, boundary=None):
    """JSON array text of the user frames from `frame` outwards, innermost first.

    boundary: new_boundary() of the innermost call running now (_modules.py). The frames
    outwards of a running call do not change while it runs, so the walk stops at its frame
    and reuses the texts of its user frames. And while a frame runs, only its own position
    moves: its stack is kept per (frame, instruction offset) for the boundary's lifetime
    (an optimizer's per-parameter loop, a module's forward: the same few lines run many
    ops). Kept frames stay referenced, so a key never names a later frame at the same
    address; at most STACKS_PER_BOUNDARY of them, each held only while its call runs.
    Generator frames are walked every time: each resumption may come from another caller."""
    if frame is None:   # the autograd engine's device thread: no frame of the program's
        return "[]"
    if boundary is None:
        return "[" + ",".join(_capped(_user_parts(frame, None)[0])) + "]"
    stacks = boundary[2]
    if frame.f_code.co_flags & _RESUMABLE:   # resumed from anywhere: its callers change
        return _walk_json(frame, boundary)
    key = (frame, frame.f_lasti)
    if stacks is not None:
        text = stacks.get(key)
        if text is not None:
            return text
    text = _walk_json(frame, boundary)
    if stacks is None:
        stacks = boundary[2] = {}
    elif len(stacks) >= STACKS_PER_BOUNDARY:
        stacks.clear()
    stacks[key] = text
    return text


def _walk_json(frame, boundary):
    """The stack text by walking to the boundary's frame, then its user frames' texts."""
    entries, stopped = _user_parts(frame, boundary[0])
    if stopped and not _complete(entries):
        outer = boundary[1]
        if outer is None:
            outer = boundary[1] = _user_parts(boundary[0], None)[0]
        entries = entries + outer
    return "[" + ",".join(_capped(entries)) + "]"


def _complete(entries):
    """MAX_FRAMES frames, one of them the program's own: the walk can stop."""
    return len(entries) >= MAX_FRAMES and any(k == PROGRAM for _, k in entries)


def _capped(entries):
    """Texts of the innermost MAX_FRAMES frames, and the program's own innermost frame when
    none of those is one: a finding inside an installed package (transformers' Trainer runs
    8 frames deep before the model) is anchored at the program's line that led there."""
    head = entries[:MAX_FRAMES]
    texts = [t for t, _ in head]
    if not any(k == PROGRAM for _, k in head):
        for t, k in entries[MAX_FRAMES:]:
            if k == PROGRAM:
                texts.append(t)
                break
    return texts


def _user_parts(frame, stop):
    """([(text, kind)] of the user frames from `frame` outwards until MAX_FRAMES of them and
    one of the program's own, whether the walk reached the frame `stop`)."""
    parts = []
    walked = 0
    cache = _user_code
    fj = _frame_json
    program = False
    while frame is not None and walked < MAX_WALK:
        if frame is stop:
            return parts, True
        code = frame.f_code
        kind = cache.get(code)
        if kind is None:
            kind = _is_user_file(code.co_filename)
            cache[code] = kind
        if kind and (len(parts) < MAX_FRAMES or (kind == PROGRAM and not program)):
            key = (code, frame.f_lasti)
            text = fj.get(key)
            if text is None:
                # the qualified name where Python has it (3.11: "ViTSelfAttention.forward"): two
                # classes' forward in one file are two places
                text = json.dumps([code.co_filename, frame.f_lineno, getattr(code, "co_qualname", code.co_name)],
                                  separators=(",", ":"))
                if len(fj) > 200000:
                    fj.clear()
                fj[key] = text
            parts.append((text, kind))
            program = program or kind == PROGRAM
            if len(parts) >= MAX_FRAMES and program:
                break
        frame = frame.f_back
        walked += 1
    return parts, False


_never_users = weakref.WeakSet()   # never_the_users' code objects: they outlive a new library dir


def never_the_users(code):
    """A code object the shim made that carries a program's file name (_transparent's
    trampolines): classified as the shim's."""
    _never_users.add(code)
    _user_code[code] = 0


def code_kind(code):
    """The frame kind of a code object (_is_user_file: 0, PACKAGE or PROGRAM), cached."""
    kind = _user_code.get(code)
    if kind is None:
        kind = _user_code[code] = _is_user_file(code.co_filename)
    return kind


def first_user_frame(frame):
    """The innermost user frame object, or None."""
    walked = 0
    while frame is not None and walked < MAX_WALK:
        if code_kind(frame.f_code):
            return frame
        frame = frame.f_back
        walked += 1
    return None


def is_user_frame(frame):
    return frame is not None and code_kind(frame.f_code)


_optimizer_code = {}   # code object -> bool


def is_torch_optimizer_code(code):
    """Code of torch.optim (torch's own optimizers and their helpers)."""
    hit = _optimizer_code.get(code)
    if hit is None:
        path = os.path.abspath(code.co_filename)
        hit = any(path.startswith(d + "optim" + os.sep) for d in _library_dirs)
        _optimizer_code[code] = hit
    return hit


def exception_site(exc):
    """"_amp.py:123" of the innermost frame of the shim in an exception's traceback (what a
    bug report needs), or ""."""
    tb = getattr(exc, "__traceback__", None)
    site = ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.abspath(code.co_filename).startswith(_SHIM_DIR):
            site = "%s:%d" % (os.path.basename(code.co_filename), tb.tb_lineno)
        tb = tb.tb_next
    return site


# The instructions a frame that ran to its end stopped at (3.11: RETURN_VALUE; 3.12 adds
# RETURN_CONST, and their instrumented forms under sys.monitoring).
_RETURNS = frozenset(("RETURN_VALUE", "RETURN_CONST", "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_RETURN_CONST"))


def returned(frame):
    """Whether a finished frame ended at a return, not by an exception passing through it."""
    code, at = frame.f_code.co_code, frame.f_lasti
    return 0 <= at < len(code) and opcode.opname[code[at]] in _RETURNS


def caller(depth):
    return sys._getframe(depth + 1)
