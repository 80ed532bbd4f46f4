"""Finds the user's frames on the Python stack: not torch's, not the shim's, not the stdlib's.

Classification is cached per code object, and each frame's JSON text per (code, line),
because the stack is walked for every recorded op.
"""

import json
import os
import sys
import sysconfig

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


def _is_user_file(filename):
    if not filename or filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):
        return True  # <string>, <stdin>: code the user typed
    path = os.path.abspath(filename)
    if path.startswith(_SHIM_DIR):
        return False
    for d in _library_dirs:
        if path.startswith(d):
            return False
    for marker in _SITE_MARKERS:
        i = path.find(marker)
        if i >= 0:
            top = path[i + len(marker):].split(os.sep, 1)[0]
            if top in _LIBRARY_PACKAGES:
                return False
            return True  # third-party code is the nearest cause the user can see
    for d in _STDLIB:
        if path.startswith(d):
            return False
    return True


_user_code = {}      # code object -> bool
_frame_json = {}     # (code object, line) -> '["file",line,"function"]'


def user_stack_json(frame, boundary=None):
    """JSON array text of the user frames from `frame` outwards, innermost first.

    boundary: [call_frame, outer] of the innermost module call running now (_modules.py).
    The frames outwards of a running call do not change while it runs, so the walk stops at
    call_frame and reuses `outer` (the texts of its user frames, filled on first use)."""
    if boundary is None:
        parts, _ = _user_parts(frame, None)
    else:
        parts, stopped = _user_parts(frame, boundary[0])
        if stopped and len(parts) < MAX_FRAMES:
            outer = boundary[1]
            if outer is None:
                outer = boundary[1] = _user_parts(boundary[0], None)[0]
            parts += outer[:MAX_FRAMES - len(parts)]
    return "[" + ",".join(parts) + "]"


def _user_parts(frame, stop):
    """(texts of up to MAX_FRAMES user frames from `frame` outwards, whether the walk
    reached the frame `stop`)."""
    parts = []
    walked = 0
    cache = _user_code
    fj = _frame_json
    while frame is not None and walked < MAX_WALK:
        if frame is stop:
            return parts, True
        code = frame.f_code
        is_user = cache.get(code)
        if is_user is None:
            is_user = _is_user_file(code.co_filename)
            cache[code] = is_user
        if is_user:
            key = (code, frame.f_lineno)
            text = fj.get(key)
            if text is None:
                text = json.dumps([code.co_filename, frame.f_lineno, code.co_name], separators=(",", ":"))
                if len(fj) > 200000:
                    fj.clear()
                fj[key] = text
            parts.append(text)
            if len(parts) >= MAX_FRAMES:
                break
        frame = frame.f_back
        walked += 1
    return parts, False


def first_user_frame(frame):
    """The innermost user frame object, or None."""
    walked = 0
    while frame is not None and walked < MAX_WALK:
        code = frame.f_code
        is_user = _user_code.get(code)
        if is_user is None:
            is_user = _is_user_file(code.co_filename)
            _user_code[code] = is_user
        if is_user:
            return frame
        frame = frame.f_back
        walked += 1
    return None


def is_user_frame(frame):
    if frame is None:
        return False
    code = frame.f_code
    is_user = _user_code.get(code)
    if is_user is None:
        is_user = _is_user_file(code.co_filename)
        _user_code[code] = is_user
    return is_user


_optimizer_code = {}   # code object -> bool


def is_torch_optimizer_code(code):
    """Code of torch.optim (torch's own optimizers and their helpers)."""
    hit = _optimizer_code.get(code)
    if hit is None:
        path = os.path.abspath(code.co_filename)
        hit = any(path.startswith(d + "optim" + os.sep) for d in _library_dirs)
        _optimizer_code[code] = hit
    return hit


def caller(depth):
    return sys._getframe(depth + 1)
