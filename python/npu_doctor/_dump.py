"""Tensor dumps for `npu-doctor compare` (docs/formats/dump.md).

DIR/index.jsonl gets one JSON line per dumped tensor, each written with one os.write() on an
O_APPEND descriptor (a killed program leaves complete lines), and DIR/tensors/NNNNNN.npy the
tensor itself via numpy's np.save of `t.detach().cpu()`. bfloat16 tensors are saved as
float32 (numpy has no bfloat16; the widening is exact) and the index keeps "bfloat16".

What is dumped (`SELECT`, a comma list with `*` globs): module paths ("model.layers.*.mlp")
dump those modules' forward outputs, aten op names ("aten::softmax", "aten::add.Tensor",
"aten::*") dump those ops' outputs; empty or "all" = every module's output. Dumping only
reads tensors (copies to host); it never changes them, and any error inside it turns the
dump off with one line on stderr, never an exception in the program.
"""

import contextlib
import fnmatch
import json
import os
import sys
import threading

from . import _frames
from ._errors import pass_on
from ._modules import ModuleTracker
from ._writer import OwnedFile

FORMAT_VERSION = 1
MAX_DEPTH = 4   # nesting of tuples/lists/dicts searched for output tensors


class Selection:
    def __init__(self, text):
        parts = [p.strip() for p in (text or "").split(",") if p.strip()]
        if not parts or parts in (["all"], ["1"], ["modules"]):
            parts = ["*"]
        self.text = ",".join(parts)
        self.ops = [p for p in parts if p.startswith("aten::")]
        self.modules = [p for p in parts if not p.startswith("aten::")]

    def module(self, path):
        for p in self.modules:
            if fnmatch.fnmatchcase(path, p):
                return True
        return False

    def op(self, name):
        base = name.split(".", 1)[0]
        for p in self.ops:
            if fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(base, p):
                return True
        return False


class _DumpTracker(ModuleTracker):
    """The recorder's module paths, plus a look at each selected module's output."""

    def __init__(self, dumper):
        super().__init__(dumper.fail)
        self._dumper = dumper

    def _leave(self, module, output):
        try:
            for i in range(len(self._stack) - 1, -1, -1):
                if self._stack[i][0] is module:
                    self._dumper.on_module_output(self._stack[i][1], output)
                    break
        except Exception as e:
            self._dumper.fail(e)
        super()._leave(module, output)


class Dumper:
    def __init__(self, directory, select, recorder):
        import torch
        import numpy   # noqa: F401  (fail early, before any hook, when numpy is missing)
        self._torch = torch
        self.dir = os.path.abspath(directory)
        self.selection = Selection(select)
        self._rec = recorder
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._calls = {}
        self._seq = 0
        self._busy = False
        self.failed = False
        os.makedirs(os.path.join(self.dir, "tensors"), exist_ok=True)
        self._index = OwnedFile(os.path.join(self.dir, "index.jsonl"), os.O_CREAT | os.O_TRUNC | os.O_APPEND)
        header = {"format": "npu-doctor-dump", "version": FORMAT_VERSION,
                  "torch": getattr(torch, "__version__", ""), "device": "", "argv": list(sys.argv),
                  "select": self.selection.text}
        self._write_line(json.dumps(header, separators=(",", ":")))
        self._tracker = _DumpTracker(self) if self.selection.modules else None

    def start(self):
        if self._tracker is not None:
            self._tracker.install()
        if self.selection.ops and self._rec is not None:
            self._rec.use_dumper(self)   # the recorder's dispatch core hands over each op's outputs

    def close(self):
        if self._tracker is not None:
            self._tracker.remove()
            self._tracker = None
        if self._rec is not None and self._rec.dumper is self:
            self._rec.use_dumper(None)
        self._index.close()

    def fail(self, exc):
        """The dump broke: say so once and stop dumping. The program's exceptions (_errors) go on to it."""
        pass_on(exc)
        if self.failed:
            return
        self.failed = True
        reason = "%s: %s" % (type(exc).__name__, exc)
        try:
            sys.stderr.write("npu-doctor: tensor dump stopped after an internal error: %s\n" % reason)
        except Exception as e:
            pass_on(e)
        try:   # `npu-doctor compare` and run's report say that the dump is incomplete, and why
            if not self._index.closed:
                self._write_line(json.dumps({"stopped": reason}, separators=(",", ":")))
        except Exception as e:
            pass_on(e)

    # --- when to dump ------------------------------------------------------------------
    def active(self):
        if self.failed or self._busy or os.getpid() != self._pid or self._index.closed:
            return False
        rec = self._rec
        return rec is None or (rec.recording and not rec.finished)

    def on_module_output(self, path, output):
        if not self.active() or not self.selection.module(path):
            return
        self._dump_outputs("module", path, path + ".forward", output)

    def on_op_output(self, name, output):
        if not self.active() or not name or not self.selection.op(name):
            return
        self._dump_outputs("op", name, name, output)

    # --- writing -----------------------------------------------------------------------
    def _dump_outputs(self, kind, name, key_base, output):
        rec = self._rec
        self._busy = True
        try:   # our copies to host are not the program's ops
            with rec.shim_ops() if rec is not None else contextlib.nullcontext(), self._lock:
                call = self._calls.get(key_base, 0)
                self._calls[key_base] = call + 1
                tensors = []
                _collect(output, self._torch.Tensor, tensors, 0)
                stack = _frames.user_stack_json(sys._getframe(2))
                for arg, t in enumerate(tensors):
                    self._dump_one(kind, name, "%s.%d.output.%d" % (key_base, call, arg), arg, call, t, stack)
        except Exception as e:
            self.fail(e)
        finally:
            self._busy = False

    def _dump_one(self, kind, name, key, arg, call, t, stack):
        torch = self._torch
        if t.is_complex() or t.layout != torch.strided or t.device.type == "meta":
            return
        dtype = str(t.dtype).replace("torch.", "")
        with torch.no_grad():
            host = t.detach().cpu()
            if host.dtype == torch.bfloat16:
                host = host.float()
            if hasattr(host, "resolve_neg"):
                host = host.resolve_neg()
            array = host.numpy()
        import numpy as np
        self._seq += 1
        rel = "tensors/%06d.npy" % self._seq
        with open(os.path.join(self.dir, rel), "wb") as f:
            np.save(f, np.ascontiguousarray(array), allow_pickle=False)
        step = self._rec.step if self._rec is not None else 0
        line = ('{"seq":%d,"key":%s,"kind":"%s","name":%s,"io":"output","arg":%d,"call":%d,"step":%d,'
                '"dtype":"%s","shape":%s,"file":"%s","stack":%s}'
                % (self._seq, json.dumps(key), kind, json.dumps(name), arg, call, step, dtype,
                   json.dumps(list(t.shape)), rel, stack))
        self._write_line(line)

    def _write_line(self, text):
        self._index.write((text + "\n").encode("utf-8", "backslashreplace"))


def _collect(value, tensor_type, out, depth):
    if isinstance(value, tensor_type):
        out.append(value)
    elif depth < MAX_DEPTH:
        if isinstance(value, (list, tuple)):
            for v in value:
                _collect(v, tensor_type, out, depth + 1)
        elif isinstance(value, dict):
            for v in value.values():
                _collect(v, tensor_type, out, depth + 1)


def _write_not_started(directory, select, reason):
    """An index whose header says why no tensor was dumped (numpy missing in the program's
    Python, an unwritable folder), so that `npu-doctor compare` and run's report can say it
    instead of finding no dump."""
    try:
        os.makedirs(directory, exist_ok=True)
        header = {"format": "npu-doctor-dump", "version": FORMAT_VERSION, "argv": list(sys.argv),
                  "select": Selection(select).text, "not_started": reason}
        with open(os.path.join(directory, "index.jsonl"), "w") as f:
            f.write(json.dumps(header, separators=(",", ":")) + "\n")
    except Exception as e:
        pass_on(e)


def start_dump(recorder, select, directory):
    """Starts dumping beside a started recorder; returns the Dumper, or None (said on stderr
    and in the dump's index)."""
    try:
        d = Dumper(directory, select, recorder)
        d.start()
        return d
    except Exception as e:   # never raise into the program (its own exceptions excepted)
        pass_on(e)
        reason = "%s: %s" % (type(e).__name__, e)
        sys.stderr.write("npu-doctor: tensor dump not started: %s\n" % reason)
        _write_not_started(directory, select, reason)
        return None
