"""What the dispatch core (_dispatch.DispatchCore) does with each op besides running it as the
program's call ran it. Whoever starts a recording declares them; one core serves them all,
so each sees the same ops the same way. Imports no torch (the recorder is made before it).
"""


class Features:
    """capture  always: the op's event in the capture file (Recorder.op_done; under
                amp-check, for the calls the session measures)
    amp      an _amp.AmpSession (amp-check), declared with the Recorder: plans each op, runs
             it in low precision and mirrors it on fp32 shadows
    dump     a _dump.Dumper (`run --dump` with op selectors), handed each op's outputs; it
             declares and withdraws itself while the recording runs (Recorder.use_dumper)
    """
    __slots__ = ("amp", "dump")

    def __init__(self, amp=None):
        self.amp = amp
        self.dump = None
