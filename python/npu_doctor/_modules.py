"""Module paths ("model.blocks.0.attn") from global forward hooks.

The root module is named after the user's variable that holds it (`model(x)` -> "model"),
found once in the calling frame's locals; children take their attribute names.
"""

import json
import sys
import weakref

from . import _frames


class ModuleTracker:
    def __init__(self, on_error):
        self._on_error = on_error
        self._stack = []           # [(module, path, path_json, boundary)]
        self._handles = []
        self._child_names = {}     # (id(parent), id(child)) -> (weakref(child), relative name)
        self._root_names = {}      # id(module) -> (weakref(module), name)
        self.current_json = '""'
        # [frame of the innermost running module call, its outer stack]: _frames.user_stack_json
        # stops its walk there (held only while the call runs, or until reset() after a raise).
        self.boundary = None

    def install(self):
        from torch.nn.modules import module as torch_module
        self._handles.append(torch_module.register_module_forward_pre_hook(self._pre))
        self._handles.append(torch_module.register_module_forward_hook(self._post))

    def remove(self):
        for h in self._handles:
            try:
                h.remove()
            except Exception:
                pass
        self._handles = []
        self.reset()

    def reset(self):
        """Forgets the stack (a forward that raised never ran its post hook)."""
        self._stack = []
        self.current_json = '""'
        self.boundary = None

    # Hooks return None: they never change the module's inputs or outputs.
    def _pre(self, module, inputs):
        try:
            parent = self._stack[-1] if self._stack else None
            if parent is None:
                path = self._root_name(module)
            else:
                path = parent[1] + "." + self._child_name(parent[0], module)
            text = json.dumps(path)
            boundary = _frames.new_boundary(sys._getframe(1))   # Module._call_impl, which calls forward next
            self._stack.append((module, path, text, boundary))
            self.current_json = text
            self.boundary = boundary
        except Exception as e:  # never raise into the program
            self._on_error(e)
        return None

    def _post(self, module, inputs, output):
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
        return None

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

    def _root_name(self, module):
        hit = self._root_names.get(id(module))
        if hit is not None and hit[0]() is module:
            return hit[1]
        name = _name_in_caller(module) or type(module).__name__
        self._root_names[id(module)] = (weakref.ref(module), name)
        return name


def _name_in_caller(module):
    """The user's name for `module`: a local variable, `self.<attr>`, or a path below one."""
    frame = _frames.first_user_frame(sys._getframe(3))
    if frame is None:
        return None
    try:
        import torch
        local_vars = dict(frame.f_locals)
    except Exception:
        return None
    for n, v in local_vars.items():
        if v is module:
            return n
    holders = []
    for n, v in local_vars.items():
        if isinstance(v, torch.nn.Module):
            holders.append((n, v))
        elif n == "self" and hasattr(v, "__dict__"):
            for an, av in vars(v).items():
                if av is module:
                    return an
                if isinstance(av, torch.nn.Module):
                    holders.append((an, av))
    for n, holder in holders:
        for sub, m in holder.named_modules():
            if m is module and sub:
                return n + "." + sub
    return None
