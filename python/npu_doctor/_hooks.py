"""The recorder that the shim's lasting hooks report to: the optimizer.step() wrappers
(_optimizer_patches) and the torch API and autograd wrappers (_api_patches) stay installed
for the rest of the process once a capture started, and look it up on every call. Set by
Recorder.start, cleared when that recorder finishes; while it is None those hooks only call
the original.
"""

# The recorder that hooks report to, or None. Set by _recorder.
active = None
