"""The capture format's events (docs/formats/capture.md, docs/formats/amp.md): the one place
that spells them. Every function returns one event as compact JSON text, ready for the
EventWriter; callers pass times in microseconds since the capture's origin and JSON texts
(module, stack, tensors) they already hold, so an op's event costs one % format.
"""

import json

_SEP = (",", ":")


def header_event(pid, args):
    return '{"ph":"M","pid":%d,"tid":0,"name":"npu_doctor","args":%s}' % (pid, json.dumps(args, separators=_SEP))


def end_event(pid, steps_completed, reason, message=""):
    """How the capture ended: "done", "stopped", "exit", "error" (the shim's), "exception"
    (the program's uncaught exception while recording, in `message`)."""
    args = {"steps_completed": steps_completed, "reason": reason}
    if message:
        args["message"] = message
    return '{"ph":"M","pid":%d,"tid":0,"name":"npu_doctor_end","args":%s}' % (pid, json.dumps(args, separators=_SEP))


def packages_event(pid, packages):
    """{top-level package: version} of the installed packages the program imported."""
    return ('{"ph":"M","pid":%d,"tid":0,"name":"npu_doctor_packages","args":{"packages":%s}}'
            % (pid, json.dumps(packages, separators=_SEP, sort_keys=True)))


def model_event(pid, path, facts):
    """A library model the program ran, at its module path: its class, attention support flags
    and config field names (_modules.library_model_facts), all strings."""
    facts = dict(facts, path=path)
    return ('{"ph":"M","pid":%d,"tid":0,"name":"npu_doctor_model","args":{"facts":%s}}'
            % (pid, json.dumps(facts, separators=_SEP, sort_keys=True)))


def compile_event(pid, kind, fields):
    """What torch.compile did (_compiled.CompileWatch): kind "graph_break" {file, line, reason,
    count, step}, "recompile" {file, line, function, reason, count, step} or "graphs" {compiled,
    in_steps}."""
    return ('{"ph":"M","pid":%d,"tid":0,"name":"npu_doctor_compile","args":{"compile":%s}}'
            % (pid, json.dumps(dict(fields, kind=kind), separators=_SEP, sort_keys=True)))


def error_event(pid, tid, ts, message, op, thread, where):
    """The shim stopped: its exception, the op being recorded ("" if none), the thread and
    the shim's own file:line that raised (for the bug report)."""
    args = {"message": message}
    if op:
        args["op"] = op
    if thread:
        args["thread"] = thread
    if where:
        args["where"] = where
    return ('{"ph":"i","s":"g","name":"npu_doctor_error","pid":%d,"tid":%d,"ts":%.3f,"args":%s}'
            % (pid, tid, ts, json.dumps(args, separators=_SEP)))


def op_facts_event(pid, facts):
    """The running torch's dispatch facts of one op (codes of docs/knowledge.md)."""
    return ('{"ph":"M","pid":%d,"tid":0,"name":"npu_doctor_op","args":{"op":%s,"dispatch":"%s","cpu":%s,'
            '"expanded":%s}}' % (pid, json.dumps(facts.name), facts.dispatch, "true" if facts.cpu_kernel else "false",
                                 "true" if facts.expand_key is not None else "false"))


def step_event(number, pid, tid, ts, dur):
    return ('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f}'
            % (number, pid, tid, ts, dur))


def op_event(name, pid, tid, ts, dur, seq, step, module, stack, inputs, outputs, extra):
    return ('{"ph":"X","cat":"aten","name":"%s","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,'
            '"args":{"seq":%d,"step":%d,"module":%s,"stack":%s,"inputs":[%s],"outputs":[%s]%s}}'
            % (name, pid, tid, ts, dur, seq, step, module, stack, ",".join(inputs), ",".join(outputs),
               ("," + extra) if extra else ""))


def python_event(cat, name, pid, tid, ts, dur, step, module, stack, reason, inputs, outputs=None):
    """A Python-level call (a sync, a placement, an API torch_npu replaces) with its tensors
    (JSON texts)."""
    return ('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,'
            '"args":{"step":%d,"module":%s,"stack":%s,"reason":%s,"inputs":[%s]%s}}'
            % (cat, name, pid, tid, ts, dur, step, module, stack, json.dumps(reason), ",".join(inputs),
               ',"outputs":[%s]' % ",".join(outputs) if outputs is not None else ""))


def config_event(cat, name, pid, tid, ts, step, stack, reason):
    """A zero-length event that records a setting (an optimizer's foreach/fused flags...)."""
    return ('{"ph":"X","cat":"%s","name":%s,"pid":%d,"tid":%d,"ts":%.3f,"dur":0,'
            '"args":{"step":%d,"stack":%s,"reason":%s}}'
            % (cat, json.dumps(name), pid, tid, ts, step, stack, json.dumps(reason)))


def instant_event(cat, name, pid, tid, ts, args):
    """An amp-check record: gradient histograms (args: a dict)."""
    return ('{"ph":"i","s":"t","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%.3f,"args":%s}'
            % (cat, name, pid, tid, ts, json.dumps(args, separators=_SEP)))


def api_event(cat, name, pid, tid, ts, step, module, stack, args):
    """A GradScaler / autocast call (amp-check) with its arguments (a dict)."""
    body = json.dumps(args, separators=_SEP)
    return ('{"ph":"i","s":"t","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%.3f,'
            '"args":{"step":%d,"module":%s,"stack":%s,%s}'
            % (cat, name, pid, tid, ts, step, module, stack, body[1:]))
