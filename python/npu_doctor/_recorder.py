"""The recorder: counts steps, records the chosen ones, writes the capture file.

States: started (counting steps, nothing recorded) -> recording (steps A..B) -> finished.
Any exception inside the shim moves it to finished through fail(): one npu_doctor_error
event, one line on stderr, and the program goes on untouched. The program's own exceptions
that pass through the shim's frames (a signal handler's, _errors.py) go on to the program.

What ends a step, first match wins for the whole run: npu_doctor.step() (the program marks
steps itself), optimizer.step() (torch.optim), else each outermost backward() of a program
that has no optimizer at all (hand-written SGD). Such a step ends where the next forward pass
begins, at the first op after backward() that computes from a parameter (a leaf that requires
grad; views and `p.data` do not count) with grad mode on, so a recorded step is forward,
backward and update, in that order. Before recording there is no dispatch mode to see that
op: a backward()-ended step is counted at the next backward() instead, unless the program
ended it itself in between (npu_doctor.step()).
"""

import atexit
import contextlib
import gc
import json
import os
import platform
import sys
import threading
import time

from . import _api_patches, _events, _frames, _hooks, _optimizer_patches
from ._advice import advice
from ._autograd import AutogradLinks
from ._compiled import CompileWatch
from ._environment import cwd, guess_device, installed_packages, installed_version
from ._errors import HEADROOM, pass_on
from ._features import Features
from ._modules import ModuleTracker
from ._python_calls import PythonCallEvents
from ._steps import reads_parameter, steps_text
from ._tensor_patches import TensorPatches
from ._tensors import TensorEncoder
from ._writer import EventWriter, FileLost

FORMAT_VERSION = 1


class Recorder:
    """Owns the capture: its state, steps, file and op events. Python-call events are written
    by its `python_calls` (_python_calls), tensor metadata in _tensors, the events' spelling
    in _events."""

    def __init__(self, path, steps=(1, 3), exclusive=False, fault_at=0, amp=None):
        """`amp`: an _amp.AmpSession (amp-check mode), attached here."""
        self.path = os.path.abspath(path)
        self.steps = steps
        self.recording = False
        self.finished = False
        self.status = False        # say at the terminal when recording starts and ends (_autostart)
        self.in_sync = False
        self.mute_ops = False
        self.step = 0
        self._exclusive = exclusive
        self._fault_at = fault_at          # test hook: fail on the Nth recorded event
        self._events = 0
        self._writer = None
        self._header_written = False
        self._step_source = None   # what ends steps: "explicit", "optimizer" or "backward"
        self._has_optimizer = None  # whether the program made a torch.optim optimizer (looked up once)
        # A backward-ended step is over; the next step begins at the next forward op (_dispatch
        # calls forward_may_start). Recording itself may wait for that op (recording False).
        self.cut_at_forward = False
        self._backward_pending = False   # a backward() ended a step that is not counted yet
        self._mode = None
        self._mode_pop_pending = False
        self._bypass = None      # _dispatch.make_bypass's torch-function mode, while recording
        self._notes = set()      # note_once keys already said
        self._pid = os.getpid()
        self._origin = time.perf_counter_ns()
        self._step_start = self._origin
        self._seq = 0
        self._tensors = TensorEncoder()   # ids, storages and layouts of recorded tensors
        # The hooks' Python-call events (SDPA, optimizer settings, placements, syncs).
        self.python_calls = PythonCallEvents(self, self._write, self._tensors, self._pid)
        self._op_names = {}
        self._error_reported = False
        self._tensor_patches = TensorPatches(self)
        self._modules = ModuleTracker(self.fail)
        self._torch = None
        self.features = Features(amp)   # what the dispatch core serves besides the capture
        self.links = None      # _autograd.AutogradLinks, from start()
        self._op_facts_written = set()
        self._exception = ""   # the program's uncaught exception while recording ("Type: message")
        # How the program ends (_ended_by): sys.last_value before the capture, and the main
        # thread's outermost frame, held from the first recorded step to the end.
        self._last_value = getattr(sys, "last_value", None)
        self._outermost = None
        self._compiled = CompileWatch()   # torch.compile's graph breaks and compiled graphs
        if amp is not None:
            amp.attach(self)

    @property
    def amp(self):
        """The _amp.AmpSession in amp-check mode, else None."""
        return self.features.amp

    @property
    def dispatch_core(self):
        """The _dispatch.DispatchCore while it is pushed, else None."""
        return self._mode

    def use_dumper(self, dumper):
        """`dumper` (a _dump.Dumper) is handed each recorded op's outputs from now on; None
        withdraws it."""
        self.features.dump = dumper

    @property
    def dumper(self):
        return self.features.dump

    @contextlib.contextmanager
    def shim_ops(self):
        """The ops run inside are the shim's own (reading a loss scale, a dump's copies to the
        host, amp-check's shadow outputs): not recorded."""
        muted, self.mute_ops = self.mute_ops, True
        try:
            yield
        finally:
            self.mute_ops = muted

    # --- lifecycle ---------------------------------------------------------------------
    def start(self):
        import torch
        self._torch = torch
        _frames.add_library_dir(os.path.dirname(torch.__file__))
        try:   # a storage's Python object lives as long as the storage (torch 2.x), so a weakref says when it dies
            probe = torch.empty(1)
            watch_storages = probe.untyped_storage() is probe.untyped_storage()
        except Exception as e:
            pass_on(e)
            watch_storages = False
        self._tensors.start(torch, watch_storages)
        self._writer = EventWriter(self.path, exclusive=self._exclusive)
        self.links = AutogradLinks(torch)
        _optimizer_patches.patch_optimizers()
        _api_patches.patch_api_functions()
        _api_patches.patch_autograd()
        if hasattr(torch, "compile"):   # torch >= 2.0
            self._compiled.install()
        _hooks.active = self
        atexit.register(self._at_exit)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork_in_child)
        if self.steps is None or self.steps[0] == 0:
            self._begin_recording()

    def now(self):
        return time.perf_counter_ns()

    def on_step_end(self, source):
        """A step ended: source "explicit" (npu_doctor.step()), "optimizer" (optimizer.step())
        or "backward" (the outermost backward() returned)."""
        with HEADROOM:
            self._on_step_end(source)

    def _on_step_end(self, source):
        try:
            if source == "explicit":
                self._step_source = "explicit"
            elif self._step_source == "explicit":
                return   # npu_doctor.step() marks steps: nothing else counts
            elif source == "optimizer":
                self._step_source = "optimizer"
            elif self._step_source == "optimizer" or self._program_has_optimizer():
                return   # backward() of a program that steps an optimizer (gradient accumulation)
            elif self.recording:
                self._use_backward_steps()
                self.cut_at_forward = True   # the update after backward() belongs to this step
                return
            elif not self._backward_pending:
                # Not yet counted: the program may still end this step itself (npu_doctor.step()
                # after backward()). The next backward() confirms it.
                self._backward_pending = True
                return
            else:
                self._use_backward_steps()
            if source != "backward":
                self._backward_pending = self.cut_at_forward = False
            self._end_step(deferred_start=source == "backward")
        except Exception as e:
            self.fail(e)

    def _use_backward_steps(self):
        if self._step_source is None:
            self._step_source = "backward"
            self.note_once("backward-steps", advice("capture", "backward_steps"))

    def forward_may_start(self, func, args):
        """Called by the dispatch mode for each top-level op while cut_at_forward is set: an
        op that computes from a parameter with grad mode on begins the next step. Views and
        aliases of a parameter do not (`p.data` and `p.detach()` are aten::detach)."""
        try:
            if not self._torch.is_grad_enabled() or not reads_parameter(self._torch.Tensor, args):
                return
            if any(r.alias_info is not None for r in func._schema.returns):
                return
            self.cut_at_forward = False
            if self.recording:
                self._end_step(deferred_start=False)
            elif not self.finished and self._mode is not None:
                self.recording = True   # recording was begun at a backward(): it starts here
                self._step_start = self.now()
        except Exception as e:
            self.fail(e)

    def _end_step(self, deferred_start):
        if self._mode_pop_pending:
            self._remove_mode()
        if self.finished or os.getpid() != self._pid:
            return
        now = self.now()
        if self.recording:
            self._write(self._step_event(self.step, self._step_start, now))
            self._writer.flush()   # a step's events are on disk when the next step starts
            self._note_other_threads()
        self._compiled.on_step_end(self.step, self.recording)
        self.step += 1
        self._step_start = now
        self._modules.reset()
        self.links.clear()
        if self.amp is not None:
            self.amp.on_step_end()
        if self.steps is not None:
            first, last = self.steps
            if self.recording and last is not None and self.step > last:
                self.finish("done")
            elif not self.recording and self.step == first:
                self._begin_recording()
                if deferred_start:   # the step begins at the next forward op, not here
                    self.recording = False
                    self.cut_at_forward = True

    def _program_has_optimizer(self):
        """Whether any torch.optim optimizer exists: one heap walk, the first time a backward()
        could end a step (a program with an optimizer ends steps at optimizer.step(), even when
        it runs several backward() per step)."""
        if self._has_optimizer is None:
            Optimizer = self._torch.optim.Optimizer
            # type(), not isinstance: an object whose __class__ is a property (torch.distributed.reduce_op) warns
            self._has_optimizer = any(issubclass(type(o), Optimizer) for o in gc.get_objects())
        return self._has_optimizer

    def finish(self, reason):
        if self.finished:
            return
        with HEADROOM:   # closing runs deep (the installed packages' versions)
            self._finish(reason)

    def _finish(self, reason):
        self.finished = True
        self._outermost = None
        if self.recording and self.cut_at_forward:   # the last backward-ended step is complete
            self._write(self._step_event(self.step, self._step_start, self.now()))
            self.step += 1
        self._end_recording()
        if os.getpid() != self._pid:
            return
        self._write_header()
        self._write_raw(_events.packages_event(self._pid, installed_packages()))
        for path, facts in list(self._modules.models.items())[:64]:
            self._write_raw(_events.model_event(self._pid, path, facts))
        for kind, fields in self._compiled.events():
            self._write_raw(_events.compile_event(self._pid, kind, fields))
        self._compiled.remove()
        self._write_raw(_events.end_event(self._pid, self.step, reason, self._exception if reason == "exception" else ""))
        if self._writer is not None:
            self._writer.close()
        if reason == "done":   # said once the capture is closed: stopping now loses nothing of it
            self._say("%s recorded; the rest of the run is not captured (stopping the program now loses nothing "
                      "of the report)" % self._steps_text())
        if _hooks.active is self:
            _hooks.active = None

    def fail(self, exc, op=""):
        """The shim broke: record it (with the op being recorded, if any, and the thread), say
        it once, stop capturing, let the program go on. Every report says so first. An
        exception of the program's (_errors.programs: its signal handler's Timeout, raised
        inside the shim) is not the shim's: it goes on to the program, and recording goes on."""
        pass_on(exc)
        if self.finished or self._error_reported:
            return
        self._error_reported = True
        self.recording = False
        with HEADROOM:
            try:
                self._say_failure(exc, op)
            except Exception as e:
                pass_on(e)
            try:
                self.finish("error")
            except Exception as e:
                pass_on(e)

    def _say_failure(self, exc, op):
        message = "%s: %s" % (type(exc).__name__, exc)
        if isinstance(exc, FileLost):   # the program's doing, not an internal error; nothing more can be written
            sys.stderr.write("npu-doctor: capture stopped: %s\n" % exc)
            return
        where = (" at %s" % op) if op else ""
        sys.stderr.write("npu-doctor: capture stopped after an internal error%s: %s\n" % (where, message))
        self._write_header()
        self._write_raw(_events.error_event(self._pid, threading.get_native_id(), self.ts(self.now()), message,
                                            op, threading.current_thread().name, _frames.exception_site(exc)))

    def _steps_text(self):
        first, last = self.steps if self.steps is not None else (0, None)
        return "step %d on" % first if last is None else ("step %d" % first if first == last else
                                                          "steps %d-%d" % (first, last))

    def _say(self, line):
        """A status line for the person at the terminal (`run` sets status there)."""
        if self.status:
            try:
                sys.stderr.write("npu-doctor: %s\n" % line)
                sys.stderr.flush()
            except Exception as e:
                pass_on(e)

    def _begin_recording(self):
        self._say("recording %s" % self._steps_text())
        if self._outermost is None:
            self._outermost = _outermost_frame()
        self._write_header()
        self._tensor_patches.install()
        self._modules.install()
        from ._dispatch import DispatchCore
        self._compiled.on_begin()
        self._mode = DispatchCore(self, self.features)
        if self.amp is not None:
            self.amp.on_begin()
        self._mode.__enter__()
        self.recording = True

    def _end_recording(self):
        self.recording = False
        self._tensor_patches.remove()
        self._modules.remove()
        if self.amp is not None:
            self.amp.on_end()
        self._remove_bypass()
        self._remove_mode()

    def enable_named_bypass(self):
        """The program made a named tensor while recording: from now on ops on named tensors
        run unrecorded (_dispatch.make_bypass). Lazy, since the bypass costs every torch call
        a Python round trip (~9 us on torch 1.13) and almost no program names tensors."""
        if self._bypass is not None or not self.recording:
            return
        try:
            from ._dispatch import make_bypass
            self._bypass = make_bypass(self)
            if self._bypass is not None:
                self._bypass.__enter__()
        except Exception as e:
            self._bypass = None
            self.fail(e)

    def _remove_bypass(self):
        """Pops the bypass mode when it is on top of the torch-function modes; else it stays,
        a pass-through once recording is off."""
        if self._bypass is None:
            return
        try:
            from torch.overrides import _get_current_function_mode
            if _get_current_function_mode() is self._bypass:
                self._bypass.__exit__(None, None, None)
        except Exception as e:
            pass_on(e)
        self._bypass = None

    def _note_other_threads(self):
        """The dispatch mode is per thread: ops other threads run are not recorded. Said once,
        naming the threads alive at the end of a recorded step."""
        if "threads" in self._notes:
            return
        me = threading.current_thread()
        others = [t.name for t in threading.enumerate() if t is not me and t.is_alive() and not _plumbing(t)]
        if others:
            self.note_once("threads", advice("capture", "other_threads", count=len(others),
                                             plural="" if len(others) == 1 else "s", names=", ".join(others[:5])))

    def enter_call(self, frame):
        """A call the program makes outside any module (optimizer.step()) runs many ops: their
        stacks end in `frame`'s, walked once (_frames.user_stack_json's boundary). Returns
        the boundary leave_call restores."""
        previous = self._modules.boundary
        self._modules.boundary = _frames.new_boundary(frame)
        return previous

    def leave_call(self, previous):
        self._modules.boundary = previous

    def result_stands_for(self, result, recorded):
        """The program's result of a call the capture ran twice is the recorded call's
        (TensorEncoder.stand_for)."""
        if self.recording:
            self._tensors.stand_for(result, recorded)

    def note_once(self, key, line):
        """One line on stderr, the first time `key` comes up: what the capture skipped."""
        if key in self._notes:
            return
        self._notes.add(key)
        try:
            sys.stderr.write(line + "\n")
        except Exception as e:
            pass_on(e)

    def _remove_mode(self):
        """Pops our dispatch mode when it is on top; inside a dispatch call (or under
        someone else's mode) it stays as a pass-through and is popped later."""
        if self._mode is None:
            self._mode_pop_pending = False
            return
        try:
            from torch.utils._python_dispatch import _get_current_dispatch_mode
            if self._mode.depth.value == 0 and _get_current_dispatch_mode() is self._mode:
                self._mode.__exit__(None, None, None)
                self._mode = None
                self._mode_pop_pending = False
            else:
                self._mode_pop_pending = True
        except Exception as e:
            self._mode_pop_pending = False
            pass_on(e)

    def _at_exit(self):
        try:
            if self._mode_pop_pending:
                self._remove_mode()
            if self.recording and not self.finished:
                self._exception = self._ended_by()
            self.finish("exception" if self._exception else "exit")
        except Exception as e:
            pass_on(e)

    def _ended_by(self):
        """What ended the program while steps were still being recorded, as "Type: message",
        or "" for its normal end. Nothing of the program's is replaced to know it (not
        sys.excepthook): Python sets sys.last_value to an uncaught exception before printing
        it; a SystemExit (sys.exit(n) in a recorded step, issue 42 F-18) leaves no trace but
        the main thread's outermost frame, which stopped short of its return. A SystemExit
        counts only when a last step was asked for (not --steps all, A:): otherwise every end
        comes after the steps asked for."""
        value = getattr(sys, "last_value", None)
        if value is not None and value is not self._last_value:
            return "%s: %s" % (type(value).__name__, value)
        if self.steps is not None and self.steps[1] is not None and self._outermost is not None \
                and not _frames.returned(self._outermost):
            return "SystemExit"   # its code is gone with it; `run` passes the exit status on
        return ""

    def _after_fork_in_child(self):
        # A forked child (DataLoader worker) must not write into the parent's file.
        self.recording = False
        self.finished = True
        if self._writer is not None:
            self._writer.abandon()

    # --- writing -----------------------------------------------------------------------
    def _write_header(self):
        if self._header_written or self._writer is None:
            return
        self._header_written = True
        torch = self._torch
        npu = sys.modules.get("torch_npu")
        args = {
            "format": "npu-doctor-capture",
            "version": FORMAT_VERSION,
            "torch": getattr(torch, "__version__", "") if torch else "",
            "python": platform.python_version(),
            "device": guess_device(torch, npu),
            "torch_npu": getattr(npu, "__version__", "") if npu else installed_version("torch_npu"),
            "argv": list(sys.argv),
            "cwd": cwd(),
            "steps": steps_text(self.steps),
        }
        # A worker of a distributed launch (torchrun, accelerate, deepspeed): the cluster view
        # places it by rank and knows how many there are (docs/formats/capture.md).
        for key, var in (("rank", "RANK"), ("world_size", "WORLD_SIZE")):
            if os.environ.get(var, "").isdigit():
                args[key] = int(os.environ[var])
        if self.amp is not None:
            args.update(self.amp.header_args())
        self._write_raw(_events.header_event(self._pid, args))

    def _write_raw(self, text):
        if self._writer is not None:
            self._writer.write_event(text)

    def _write(self, text):
        self._events += 1
        if self._fault_at and self._events >= self._fault_at:
            self._fault_at = 0
            raise RuntimeError("fault injected by NPUD_TEST_FAULT")
        self._writer.write_event(text)

    def _step_event(self, number, start, end):
        return _events.step_event(number, self._pid, threading.get_native_id(), self.ts(start), (end - start) / 1000.0)

    def ts(self, ns):
        """A perf_counter_ns() time as the capture's timestamp (microseconds since start)."""
        return (ns - self._origin) / 1000.0

    @property
    def module_json(self):
        return self._modules.current_json

    def write_instant(self, cat, name, args):
        """An amp-check record (a gradient histogram) at this moment."""
        self._write(_events.instant_event(cat, name, self._pid, threading.get_native_id(), self.ts(self.now()), args))

    def write_api(self, cat, name, t0, frame, args):
        """A GradScaler / autocast call of the program."""
        self._write(_events.api_event(cat, name, self._pid, threading.get_native_id(), self.ts(t0), self.step,
                                      self._modules.current_json, _frames.user_stack_json(frame), args))

    def op_name(self, func):
        """The knowledge base's spelling ("aten::add.Tensor", "aten::mm"), or "" for ops
        that are bookkeeping, not device work (profiler::_record_function_enter...)."""
        name = self._op_names.get(func)
        if name is None:
            overload = func._overloadname
            name = func._schema.name if overload == "default" else func._schema.name + "." + overload
            if name.startswith("profiler::"):
                name = ""
            self._op_names[func] = name
        return name

    def note_op_facts(self, facts):
        """The running torch's dispatch facts of an op, once per op name
        (docs/formats/capture.md "Dispatch facts"): FALLBACK002 judges by them."""
        if facts.name in self._op_facts_written:
            return
        self._op_facts_written.add(facts.name)
        self._write_raw(_events.op_facts_event(self._pid, facts))

    def op_site(self, frame):
        """Where the op running now was called from (a Site)."""
        back = self.links.backward_of()
        module = back[1] if back is not None else None
        return Site(frame, back, self._modules.current_json if module is None else module)

    def site_stack(self, site):
        """The JSON stack of a site: the forward op's for the backward pass (when known), the
        user frames from the caller's frame, else (the autograd engine's device thread, which
        has no Python frame of the program's) the backward() call that runs the pass."""
        stack = site.stack
        if stack is None:
            back = site.back
            if back is not None and back[2] is not None:
                stack = back[2]
            elif site.frame is not None:
                stack = _frames.user_stack_json(site.frame, self._modules.boundary)
            else:
                stack = self.links.backward_stack or "[]"
            site.stack = stack
        return stack

    def op_inputs(self, args, kwargs):
        """Input metadata, taken before the op runs (in-place ops change it), and the op's
        string arguments and keyword flags as `name=value` text (scatter_reduce's `reduce`,
        `include_self`): what decides whether some kernels run on the AI cores."""
        parts = []
        attrs = None
        tensors = self._tensors
        tensors.grad_in = False
        seen_ids = {}
        seen_storages = {}
        pos = 0
        # Positional arguments are named by their position (the schema names them later).
        items = enumerate(args) if not kwargs else list(enumerate(args)) + list(kwargs.items())
        for key, a in items:
            after = tensors.add_tensors(a, pos, parts, seen_ids, seen_storages, False)
            if after is None:
                if isinstance(a, str) or (isinstance(a, bool) and not isinstance(key, int)):
                    attrs = (attrs or []) + [(key, a)]
                pos += 1
            else:
                pos = after
        return parts, seen_ids, seen_storages, attrs, tensors.grad_in

    def op_done(self, name, func, pre, out, t0, t1, site, depth, extra=""):
        """Writes the op's event. `depth` 1: called by the program (or autograd); deeper: an
        op inside an expanded composite kernel, which takes the enclosing op's site."""
        parts, seen_ids, seen_storages, attrs, grad_in = pre
        if attrs:
            extra = _attrs_json(func, attrs) + ("," + extra if extra else "")
        outs = []
        if isinstance(out, (list, tuple)):
            pos = 0
            for o in out:
                after = self._tensors.add_tensors(o, pos, outs, seen_ids, seen_storages, True)
                pos = pos + 1 if after is None else after
        else:
            self._tensors.add_tensors(out, 0, outs, seen_ids, seen_storages, True)
        self._seq += 1
        # Ops the shim runs inside another op's kernel make no autograd node.
        back = site.back if depth == 1 else None
        if back is not None:   # a backward op: the forward op's module and stack, and its name
            extra = '"bwd":"%s"' % back[0] + ("," + extra if extra else "")
        module, stack = site.module, self.site_stack(site)
        if back is None and depth == 1 and grad_in:
            self.links.note_forward(name, module, stack)
        self._write(_events.op_event(name, self._pid, threading.get_native_id(), self.ts(t0), (t1 - t0) / 1000.0,
                                     self._seq, self.step, module, stack, parts, outs, extra))


def _outermost_frame():
    """The main thread's outermost frame: the program's __main__ code (runpy's under -m)."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    while frame is not None and frame.f_back is not None:
        frame = frame.f_back
    return frame


def _plumbing(thread):
    """A thread of the standard library's process plumbing (multiprocessing's queue feeders
    behind a DataLoader's workers, its resource sharer) or tqdm's monitor (it wakes to refresh
    progress bars; torch.compile's inductor starts one too): it runs no torch op, so it is not
    worth a note."""
    target = getattr(thread, "_target", None)
    module = getattr(target, "__module__", "") or ""
    return module.startswith("multiprocessing") or (type(thread).__module__ or "").startswith("tqdm.")


class Site:
    """Where an op was called from: the caller's frame (None on the autograd engine's device
    thread, which runs the backward pass on CUDA and NPU), the op's autograd link when it
    belongs to the backward pass ((forward op, module json, stack json), _autograd.py), the
    module json, and the stack json once Recorder.site_stack made it."""
    __slots__ = ("frame", "back", "module", "stack")

    def __init__(self, frame, back, module):
        self.frame = frame
        self.back = back
        self.module = module
        self.stack = None

    def key(self):
        """What amp-check counts calls per: the calling line and module; for frame-less
        backward ops, the forward op's stack."""
        frame = self.frame
        if frame is not None:
            return (frame.f_code, frame.f_lineno, self.module)
        back = self.back
        return ("backward", back[2] if back is not None else None, self.module)


def _attrs_json(func, attrs):
    """`"reason":"reduce=sum include_self=False"`: positional strings named by the schema."""
    schema_args = func._schema.arguments
    text = []
    for key, value in attrs:
        if isinstance(key, int):
            key = schema_args[key].name if key < len(schema_args) else "arg%d" % key
        text.append("%s=%s" % (key, value))
    return '"reason":%s' % json.dumps(" ".join(text))
