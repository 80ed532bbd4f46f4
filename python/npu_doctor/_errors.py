"""Whose exception is it, and room on the stack for the shim's own frames (issue 42).

The shim never raises its own errors into the program (they stop the capture: _recorder.fail),
and it never takes the program's exceptions for its own. An exception that reaches one of the
shim's `except Exception` clauses may be the program's:

- a signal handler's: Python runs a handler between two bytecodes of whatever frame is
  running, often the shim's during a recorded step, so a SIGALRM handler raising the
  program's Timeout (a time budget) raises inside the shim;
- raised by the program's own code that runs inside the shim's call (a dispatch mode of the
  program's below the capture's, its closure inside a wrapped optimizer.step()).

Those go on to the program (`pass_on`); swallowing them changed the program's control flow
(a Timeout lost, a `while True` loop never ending). KeyboardInterrupt and SystemExit are not
Exceptions and already pass every `except Exception`. Where the shim reads the program's
objects of its own accord and has an answer without them (a tensor subclass that will not
say its strides), what that read raises is the answer, and only the asynchronous exceptions
go on (`pass_on_async`).

The shim's frames also sit on the program's stack: a program running close to its
recursion limit (it works plainly) would see a RecursionError raised in the shim's frames.
`HEADROOM` lends those frames room above the program's limit while they run.
"""

import signal
import sys
import threading
import weakref

from . import _frames

HEADROOM_FRAMES = 100   # the shim's deepest work: an op inside an expanded composite, a note's text, the close


def programs(exc, asynchronous_only=False):
    """Whether `exc` is the program's: not an Exception (KeyboardInterrupt, SystemExit), raised
    inside a Python signal handler installed now (the program's or a package's), or (unless
    `asynchronous_only`) raised in a frame of the program's own files."""
    if not isinstance(exc, Exception):
        return True
    handlers = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        kind = _frames.code_kind(code)
        if kind == _frames.PROGRAM and not asynchronous_only:
            return True
        if kind:   # the program's or a package's code: a signal handler's?
            if handlers is None:
                handlers = _signal_handler_codes()
            if code in handlers:
                return True
        tb = tb.tb_next
    return False


def pass_on(exc):
    """Raises `exc` again when it is the program's (programs()); returns when it is the shim's.
    The shim's `except Exception` clauses call it (or pass_on_async) first."""
    if programs(exc):
        raise exc


def pass_on_async(exc):
    """pass_on for a read the shim made of its own accord: only the asynchronous exceptions
    (a signal handler's, KeyboardInterrupt) go on; the rest is the read's answer."""
    if programs(exc, asynchronous_only=True):
        raise exc


def _signal_handler_codes():
    """Code objects of the Python signal handlers installed now (functions, bound methods,
    functools.partial, callable objects)."""
    codes = set()
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        fn = getattr(handler, "__func__", handler)
        fn = getattr(fn, "func", fn)
        code = getattr(fn, "__code__", None) or getattr(getattr(type(fn), "__call__", None), "__code__", None)
        if code is not None:
            codes.add(code)
    return codes


class Headroom:
    """`with HEADROOM:` raises the recursion limit by HEADROOM_FRAMES while the shim's frames
    run inside the program's calls (dispatch, hooks, step ends, the capture's close), so they
    never hit a limit the program's own frames come close to; the outermost such frame puts
    the program's limit back when it leaves, unless the program set another meanwhile (its code
    inside the shim's call), which stays. The frames above the shim's (torch's wrappers around
    a dispatch mode) count against the program's own limit.

    The limit is one per interpreter and a signal handler's exception may land between any two
    bytecodes, so the state is the limit itself: a limit this raised is never raised again (an
    exception that skipped the restore leaves it HEADROOM_FRAMES up, never more); which frame
    restores it is kept per thread."""

    def __init__(self):
        self._raised = None          # the limit this set, while it stands
        self._stack = threading.local()

    def __enter__(self):
        limit = sys.getrecursionlimit()
        if limit == self._raised:
            limit = None   # raised by an outer frame: that one restores it
        else:
            self._raised = limit + HEADROOM_FRAMES
            sys.setrecursionlimit(self._raised)
        saved = getattr(self._stack, "saved", None)
        if saved is None:
            saved = self._stack.saved = []
        saved.append(limit)
        return self

    def __exit__(self, kind, value, tb):
        saved = getattr(self._stack, "saved", None)
        limit = saved.pop() if saved else None
        if limit is not None and sys.getrecursionlimit() == self._raised:
            sys.setrecursionlimit(limit)
            self._raised = None
        return False


HEADROOM = Headroom()


class Deaths:
    """Weak references whose callbacks run none of the shim's code. The interpreter calls a
    weakref's callback wherever its object dies and drops what the callback raises ("Exception
    ignored in ..."): a signal handler's exception landing in a callback of the shim's would be
    lost to the program. These callbacks are a list's append (no Python frame, so no handler
    runs inside them); the shim handles the deaths later, in its own frames (take())."""

    def __init__(self):
        self.dead = []        # weakrefs whose object died, appended by the interpreter (non-empty: take())
        self._watched = {}    # id(weakref) -> (weakref, what it stands for): alive until taken

    def watch(self, obj, what):
        """A weak reference to `obj`; take() yields `what` once obj died."""
        ref = weakref.ref(obj, self.dead.append)
        self._watched[id(ref)] = (ref, what)
        return ref

    def take(self):
        """(weakref, what) of each watched object that died since the last call."""
        while self.dead:
            entry = self._watched.pop(id(self.dead.pop()), None)
            if entry is not None:
                yield entry

    def clear(self):
        self.dead.clear()
        self._watched.clear()
