"""torch.compile seen from the capture (issue 41). Ops inside a compiled graph run as the
backend's kernels, so the capture records the code around them, not their ops one by one; what
it can say is where torch._dynamo broke a graph (the user's file:line and torch's reason) and
how many graphs it compiled while steps were recorded (recompiles cost every step they happen in).

Graph breaks come from torch._dynamo's own `graph_breaks` log artifact (TORCH_LOGS=graph_breaks
prints it): a handler of ours on its loggers, set up before torch._dynamo is imported. Unless the
program asked for those logs itself, the loggers are made to pass their records to our handler
only (no output: the program's stderr stays its own) and are put back at the end. Compiled graphs
are counted from torch._dynamo.utils.counters, read at step ends when torch._dynamo is loaded.
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
_MAX_BREAKS = 64
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


class CompileWatch:
    def __init__(self):
        self.breaks = {}      # (file, line) -> [(type, explanation, hint), times logged, step first logged in]
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

    def remove(self):
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
        total = self.graphs()
        if total:
            out.append(("graphs", {"compiled": total, "in_steps": self.graphs_in_steps}))
        return out
