"""torch.compile seen from the capture (issue 41). Ops inside a compiled graph run as the
backend's kernels, so the capture records the code around them, not their ops one by one; what
it can say is where torch._dynamo broke a graph (the user's file:line and torch's reason) and
how many graphs it compiled while steps were recorded (recompiles cost every step they happen in).

Graph breaks come from torch._dynamo's own `graph_breaks` log artifact (TORCH_LOGS=graph_breaks
prints it): a handler of ours on its loggers, set up before torch._dynamo is imported. Unless the
program asked for those logs itself, the loggers are made to pass their records to our handler
only (no output: the program's stderr stays its own) and are put back at the end. Compiled graphs
are counted from torch._dynamo.utils.counters, read at step ends when torch._dynamo is loaded.

Recompiles come from the `recompiles` artifact (TORCH_LOGS=recompiles): dynamo formats its guard
failures only when that artifact is enabled, so we enable it in torch._logging's state, and a
filter of ours on its logger takes each record and drops it (a filter, not a handler: torch sets
the logger to propagate to its own stderr handler when the artifact is enabled). A program that
asked for recompile logs keeps them printed.
"""

import logging
import os
import re
import sys

from ._errors import pass_on

_LOGGERS = ("torch._dynamo.symbolic_convert.__graph_breaks", "torch._dynamo.exc.__graph_breaks",
            "torch._dynamo.convert_frame.__graph_breaks")
_AT = re.compile(r"in user code at (.+?):(\d+)\n")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
_RECOMPILES_LOGGER = "torch._dynamo.guards.__recompiles"
_RECOMPILING = re.compile(r"Recompiling function (\S+) in (.+?):(\d+)\n")
# One cache entry's failed guard: "- 0/1: n == 2". The lines under it (its user stack trace and
# source line, "-   File ...", "-     return x * n") are not failures.
_GUARD_FAILURE = re.compile(r"^\s*- \d+/\d+: (.+)$", re.M)
# A guard on torch's global module hooks: the capture's (_modules.ModuleTracker installs them
# when recording starts and removes them at its end), not the program's.
_CAPTURE_GUARD = re.compile(r"\._global_(?:forward|backward)(?:_pre)?_hooks\b")
_MAX_BREAKS = 64
_MAX_REASONS = 3
_HERE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _ours(path):
    return path.startswith(_HERE)


def _reason(message):
    """(graph-break type, explanation, first hint) from dynamo's message: "Graph Break Reason:"
    names the bytecode it stopped at, the next line the break's type ("Data-dependent
    branching"); older torches give one line."""
    lines = [line.strip() for line in message.splitlines()]
    kind = explanation = hint = ""
    for i, line in enumerate(lines):
        if line.startswith("Graph Break Reason:") and not kind:
            kind = line.split(":", 1)[1].strip()
            if kind.startswith("Encountered graph break when attempting"):
                kind = next((x for x in lines[i + 1:] if x), kind)
        elif line.startswith("Explanation:") and not explanation:
            explanation = line.split(":", 1)[1].strip()
        elif line.startswith("Hint:") and not hint:
            hint = line.split(":", 1)[1].strip()
    if not kind:
        kind = next((x for x in lines if x), "")
    return kind[:300], explanation[:400], hint[:400]


class _Handler(logging.Handler):
    def __init__(self, watch):
        super().__init__(logging.DEBUG)
        self.watch = watch

    def emit(self, record):
        try:
            self.watch.on_graph_break(record.getMessage())
        except Exception as e:   # never the program's problem
            pass_on(e)


class _RecompileFilter(logging.Filter):
    """Takes dynamo's recompile records; passes them on only when the program asked for them."""

    def __init__(self, watch, keep):
        super().__init__()
        self.watch, self.keep = watch, keep

    def filter(self, record):
        try:
            self.watch.on_recompile(record.getMessage())
        except Exception as e:   # never the program's problem
            pass_on(e)
        return self.keep


def _program_wants(artifact):
    """TORCH_LOGS names the artifact (the program asked torch to print it)."""
    return any(w.strip().lstrip("+-") == artifact for w in os.environ.get("TORCH_LOGS", "").split(","))


class CompileWatch:
    def __init__(self):
        self.breaks = {}      # (file, line) -> [(type, explanation, hint), times logged, step first logged in]
        self.recompiles = {}  # (file, line, function) -> [distinct first guard failures, times, step first logged in]
        self._recompile_filter = None
        self._enabled_recompiles = False
        self.step = 0
        self.graphs_in_steps = 0
        self._graphs_at_begin = None
        self._installed = []  # (logger, handler, level, propagate)

    def install(self):
        for name in _LOGGERS:
            log = logging.getLogger(name)
            handler = _Handler(self)
            self._installed.append((log, handler, log.level, log.propagate))
            if not log.isEnabledFor(logging.DEBUG):   # the program did not ask for these logs: ours only
                log.setLevel(logging.DEBUG)
                log.propagate = False
            log.addHandler(handler)
        self._install_recompiles()

    def _install_recompiles(self):
        try:
            import torch._logging._internal as internal   # loaded with torch; dynamo is not yet
            state = internal.log_state
            if not state.is_artifact_enabled("recompiles"):
                state.enable_artifact("recompiles")
                self._enabled_recompiles = True
        except Exception as e:   # a torch without the artifact: no recompiles reported
            pass_on(e)
            return
        self._recompile_filter = _RecompileFilter(self, keep=_program_wants("recompiles"))
        logging.getLogger(_RECOMPILES_LOGGER).addFilter(self._recompile_filter)

    def remove(self):
        if self._recompile_filter is not None:
            logging.getLogger(_RECOMPILES_LOGGER).removeFilter(self._recompile_filter)
            self._recompile_filter = None
        if self._enabled_recompiles:
            try:
                import torch._logging._internal as internal
                internal.log_state.artifact_names.discard("recompiles")
            except Exception as e:
                pass_on(e)
            self._enabled_recompiles = False
        for log, handler, level, propagate in self._installed:
            log.removeHandler(handler)
            if log.level == logging.DEBUG and not log.propagate:   # as we left it
                log.setLevel(level)
                log.propagate = propagate
        self._installed = []

    def on_graph_break(self, message):
        frames = [(f, int(n)) for f, n in _FRAME.findall(message)]   # the user code traceback's, innermost last
        at = _AT.search(message)
        where = (at.group(1), int(at.group(2))) if at else (frames[-1] if frames else None)
        if where is None:
            return
        if _ours(where[0]):
            if "skip" in message.split("\n", 1)[0].lower() or "Skipping the function" in message:
                return   # dynamo gave up on the capture's own function: eager, as it ran without compile
            # The program's break seen one frame deeper, in a wrapper of ours handing the call on
            # (Tensor.item): at the program's frame that made the call.
            theirs = [f for f in frames if not _ours(f[0])]
            if not theirs:
                return
            where = theirs[-1]
        entry = self.breaks.get(where)
        if entry is not None:
            entry[1] += 1
        elif len(self.breaks) < _MAX_BREAKS:
            self.breaks[where] = [_reason(message), 1, self.step]

    def on_recompile(self, message):
        """dynamo recompiles a function whose guards failed: "Recompiling function f in
        file:line" and the guard failures, one per cache entry, the newest first. A function of
        the shim's own (its wrappers) is left out, and so is a recompile whose every failure is
        a guard on the capture's module hooks; the reason is the first failure that is not. The
        program's line is where the function is defined."""
        at = _RECOMPILING.search(message)
        if at is None or _ours(at.group(2)):
            return
        body = message[at.end():]
        failures = [m.group(1).strip() for m in _GUARD_FAILURE.finditer(body)]
        theirs = [f for f in failures if not _CAPTURE_GUARD.search(f)]
        if failures and not theirs:
            return   # recompiled only because the capture's module hooks came or went
        reason = theirs[0].split("  #", 1)[0].strip()[:400] if theirs else ""
        key = (at.group(2), int(at.group(3)), at.group(1))
        entry = self.recompiles.get(key)
        if entry is not None:
            entry[1] += 1
            if reason and reason not in entry[0] and len(entry[0]) < _MAX_REASONS:
                entry[0].append(reason)   # another cause of the same function's recompiles
        elif len(self.recompiles) < _MAX_BREAKS:
            self.recompiles[key] = [[reason] if reason else [], 1, self.step]

    def graphs(self):
        """Graphs torch._dynamo compiled so far, or None when it is not loaded."""
        utils = sys.modules.get("torch._dynamo.utils")
        counters = getattr(utils, "counters", None)
        if counters is None:
            return None
        try:
            return int(counters["stats"]["unique_graphs"])
        except Exception as e:
            pass_on(e)
            return None

    def on_begin(self):
        self._graphs_at_begin = self.graphs()

    def on_step_end(self, step, recording):
        self.step = step + 1
        if recording:
            now = self.graphs()
            if now is not None:
                self.graphs_in_steps += now - (self._graphs_at_begin or 0)
                self._graphs_at_begin = now

    def events(self):
        """What the capture says of torch.compile: (kind, fields) pairs for _events.compile_event."""
        out = [("graph_break", {"file": f, "line": line, "reason": r[0], "explanation": r[1], "hint": r[2],
                                "count": n, "step": s})
               for (f, line), (r, n, s) in self.breaks.items()]
        out += [("recompile", {"file": f, "line": line, "function": fn, "reason": r[0] if r else "", "reasons": r,
                               "count": n, "step": s})
                for (f, line, fn), (r, n, s) in self.recompiles.items()]
        total = self.graphs()
        if total:
            out.append(("graphs", {"compiled": total, "in_steps": self.graphs_in_steps}))
        return out
