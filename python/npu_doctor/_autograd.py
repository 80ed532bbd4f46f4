"""Which forward op an op of the backward pass belongs to.

Autograd numbers the node it makes for each differentiable forward op (a thread-local
sequence number, read here right after the op ran: the node was made before it, so it is
the counter minus one). While the backward pass runs, torch >= 2.1 tells which node is
executing (`torch._C._current_autograd_node()`): its sequence number leads back to the
forward op, whose module and user stack the backward op then takes. Without that API (torch
1.x) the backward pass is still known, from torch.autograd.backward / grad being on the
stack (_api_patches.patch_autograd), but not which forward op each backward op serves.

Rules need this twice: a backward op is the cost of the forward line that made it (not of
the `loss.backward()` line), and amp-check must not ask to keep a gradient op in fp32
(gradient range is the loss scaler's job).
"""

ACCUMULATE_GRAD = 2 ** 64 - 1   # AccumulateGrad nodes have no sequence number of their own


class AutogradLinks:
    def __init__(self, torch):
        ag = getattr(torch._C, "_autograd", None)
        self._counter = getattr(ag, "_get_sequence_nr", None)
        self._current = getattr(torch._C, "_current_autograd_node", None)
        self._grad_enabled = torch.is_grad_enabled
        self._forward = {}      # sequence number -> (op name, module json, stack json)
        self.in_backward = 0    # torch.autograd.backward / grad calls running (set by _api_patches)
        self.backward_passes = 0   # outermost backward / grad calls that returned: gradients may be new
        # JSON stack of the outermost backward() / grad() call running (set by _api_patches): what
        # a backward op is attributed to when neither a frame nor its forward op is known.
        self.backward_stack = None

    def clear(self):
        """At each step end: the next step's graph starts afresh."""
        self._forward = {}

    def note_forward(self, name, module_json, stack_json):
        """A forward op with an input that requires grad ran: its node is the last one made.
        An op that made none (not differentiable) finds that number taken and leaves it."""
        if self._counter is None or not self._grad_enabled():
            return
        seq = self._counter() - 1
        if seq >= 0 and seq not in self._forward:
            self._forward[seq] = (name, module_json, stack_json)

    def backward_of(self):
        """None outside the backward pass. Inside: (forward op name, its module json, its
        stack json); the name is "AccumulateGrad" for the writes into .grad and "" when the
        forward op is not known (torch 1.x, or it ran before recording began)."""
        node = self._current() if self._current is not None else None
        if node is None:
            return ("", None, None) if self.in_backward else None
        seq = node._sequence_nr()
        if seq == ACCUMULATE_GRAD:
            return ("AccumulateGrad", None, None)
        return self._forward.get(seq, ("", None, None))
