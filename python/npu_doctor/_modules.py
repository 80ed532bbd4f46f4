"""Module paths ("model.blocks.0.attn") from global forward hooks.

The root module is named after the user's variable that holds it (`model(x)` -> "model"),
found once in the calling frame's locals; children take their attribute names.
"""

import json
import sys
import warnings
import weakref

from . import _frames
from ._errors import HEADROOM, pass_on
from ._transparent import compiling


_COMPILE_HOOK_WARNING = r"Using `torch\.compile\(module\)` when there are global hooks on modules"


class ModuleTracker:
    def __init__(self, on_error):
        self._on_error = on_error
        self._stack = []           # [(module, path, path_json, boundary)]
        self._handles = []
        self._filter = None        # our entry in warnings.filters while the hooks are installed
        self._child_names = {}     # (id(parent), id(child)) -> (weakref(child), relative name)
        self._root_names = {}      # id(module) -> (weakref(module), name)
        self._facts_seen = {}      # id(module) -> weakref(module): library_model_facts asked once
        self.models = {}           # module path -> library_model_facts (written at the end)
        self.current_json = '""'
        # [frame of the innermost running module call, its outer stack]: _frames.user_stack_json
        # stops its walk there (held only while the call runs, or until reset() after a raise).
        self.boundary = None

    def install(self):
        from torch.nn.modules import module as torch_module
        self._handles.append(torch_module.register_module_forward_pre_hook(self._pre))
        self._handles.append(torch_module.register_module_forward_hook(self._post))
        # torch.compile'd modules warn at each call while global hooks exist (torch >= 2.1): these
        # hooks are ours, the warning is not the program's to see.
        warnings.filterwarnings("ignore", message=_COMPILE_HOOK_WARNING, category=UserWarning)
        self._filter = warnings.filters[0]

    def remove(self):
        filt, self._filter = self._filter, None
        if filt is not None and filt in warnings.filters:
            warnings.filters.remove(filt)
            getattr(warnings, "_filters_mutated", lambda: None)()   # the filters' cache of seen warnings
        for h in self._handles:
            try:
                h.remove()
            except Exception as e:
                pass_on(e)
        self._handles = []
        self.reset()

    def reset(self):
        """Forgets the stack (a forward that raised never ran its post hook)."""
        self._stack = []
        self.current_json = '""'
        self.boundary = None

    # Hooks return None: they never change the module's inputs or outputs. `_on_error` passes
    # the program's exceptions on (_errors). Traced by torch.compile, they are nothing
    # (_transparent.compiling): the compiled graph is the program's own.
    def _pre(self, module, inputs):
        if compiling():
            return None
        caller = sys._getframe(1)   # Module._call_impl, which calls forward next
        with HEADROOM:
            self._enter(module, caller)
        return None

    def _post(self, module, inputs, output):
        if compiling():
            return None
        with HEADROOM:
            self._leave(module, output)
        return None

    def _enter(self, module, caller):
        try:
            parent = self._stack[-1] if self._stack else None
            if parent is None:
                path = self._root_name(module, caller)
            else:
                path = parent[1] + "." + self._child_name(parent[0], module)
            text = json.dumps(path)
            seen = self._facts_seen.get(id(module))
            if seen is None or seen() is not module:
                self._facts_seen[id(module)] = weakref.ref(module)
                # the model the user built, not the models inside it (T5's T5Stack)
                inner = any(entry[1] in self.models for entry in self._stack)
                facts = None if inner else library_model_facts(module)
                if facts is not None:
                    self.models.setdefault(path, facts)
            boundary = _frames.new_boundary(caller)
            self._stack.append((module, path, text, boundary))
            self.current_json = text
            self.boundary = boundary
        except Exception as e:  # never raise into the program
            self._on_error(e)

    def _leave(self, module, output):
        try:
            stack = self._stack
            for i in range(len(stack) - 1, -1, -1):
                if stack[i][0] is module:
                    del stack[i:]
                    break
            if stack:
                self.current_json, self.boundary = stack[-1][2], stack[-1][3]
            else:
                self.current_json, self.boundary = '""', None
        except Exception as e:
            self._on_error(e)

    def _child_name(self, parent, child):
        key = (id(parent), id(child))
        hit = self._child_names.get(key)
        if hit is not None and hit[0]() is child:
            return hit[1]
        name = None
        for n, m in parent._modules.items():
            if m is child:
                name = n
                break
        if name is None:
            for n, m in parent.named_modules():
                if m is child and n:
                    name = n
                    break
        if name is None:
            name = type(child).__name__
        self._child_names[key] = (weakref.ref(child), name)
        return name

    def _root_name(self, module, caller):
        hit = self._root_names.get(id(module))
        if hit is not None and hit[0]() is module:
            return hit[1]
        name = _name_in_caller(module, caller) or type(module).__name__
        self._root_names[id(module)] = (weakref.ref(module), name)
        return name


_SUPPORT_FLAGS = ("_supports_flash_attn", "_supports_flash_attn_2", "_supports_sdpa")


def library_model_facts(module):
    """What a transformers model class and its config allow, for checking a lever against the
    model it is given for (issue 45: T5 has `_supports_flash_attn = False`, and its config has no
    `hidden_act`): the class, its attention support flags, and the names of the config's plain
    fields. None for other modules. Only class and instance dictionaries are read: no code of
    the program's objects runs."""
    cls = type(module)
    if not any(c.__name__ == "PreTrainedModel" and (c.__module__ or "").startswith("transformers")
               for c in cls.__mro__):
        return None
    facts = {"class": "%s.%s" % (cls.__module__, cls.__qualname__)}
    for flag in _SUPPORT_FLAGS:
        for c in cls.__mro__:
            value = c.__dict__.get(flag)
            if value is not None:
                if isinstance(value, bool):
                    facts[flag] = "1" if value else "0"
                break
    config = module.__dict__.get("config")
    fields = getattr(config, "__dict__", None)
    if isinstance(fields, dict):
        facts["config_class"] = type(config).__qualname__
        facts["config"] = ",".join(sorted(k for k, v in fields.items()
                                          if not k.startswith("_") and isinstance(v, (str, int, float, bool))))
    return facts


def _name_in_caller(module, caller):
    """The user's name for `module`: a local variable, `self.<attr>`, or a path below one,
    in the innermost user frame from `caller` out. Only types and instance dictionaries are
    read: no code of the program's objects runs (a proxy's __class__, a __getattr__)."""
    frame = _frames.first_user_frame(caller)
    if frame is None:
        return None
    import torch
    Module = torch.nn.Module
    local_vars = dict(frame.f_locals)
    for n, v in local_vars.items():
        if v is module:
            return n
    holders = []
    for n, v in local_vars.items():
        if issubclass(type(v), Module):
            holders.append((n, v))
        elif n == "self":
            for an, av in _instance_dict(v).items():
                if av is module:
                    return an
                if issubclass(type(av), Module):
                    holders.append((an, av))
    for n, holder in holders:
        for sub, m in holder.named_modules():
            if m is module and sub:
                return n + "." + sub
    return None


def _instance_dict(obj):
    """obj's own attribute dictionary, read past any __getattr__/__getattribute__ of its class."""
    try:
        attrs = object.__getattribute__(obj, "__dict__")
    except AttributeError as e:   # __slots__
        pass_on(e)
        return {}
    return attrs if isinstance(attrs, dict) else {}
