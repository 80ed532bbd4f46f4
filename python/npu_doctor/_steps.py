"""Which steps a capture records ("A:B", "N", "all") and what can begin a step.
"""


def parse_steps(text):
    """"A:B" (inclusive), "N" (= N:N) or "all"/"" (every step) -> (A, B) or None."""
    text = (text or "").strip()
    if text in ("", "all", ":"):
        return None
    if ":" in text:
        a, b = text.split(":", 1)
        first = int(a) if a.strip() else 0
        last = int(b) if b.strip() else None
    else:
        first = last = int(text)
    if first < 0 or (last is not None and last < first):
        raise ValueError("steps must be A:B with 0 <= A <= B, got %r" % text)
    return (first, last)


def steps_text(steps):
    if steps is None:
        return "all"
    return "%d:%s" % (steps[0], "" if steps[1] is None else steps[1])


def reads_parameter(Tensor, args):
    """A tensor argument (or one in a list argument) that is a leaf requiring grad."""
    for a in args:
        if isinstance(a, Tensor):
            if a.requires_grad and a.is_leaf:
                return True
        elif isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, Tensor) and t.requires_grad and t.is_leaf:
                    return True
    return False
