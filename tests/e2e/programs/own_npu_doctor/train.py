"""A program that owns what the capture must leave alone (issue 42). After `import torch` it
closes every descriptor above 2 the way a daemon does and opens its log (which gets the lowest
number: the capture's, before); in step 2 it closes every descriptor but its log again, in step 3
it points every one but its log at its log (dup2) and ends with sys.exit(3). It imports its own
module named npu_doctor (beside it) and calls its own step(); it looks at its sys.excepthook and
environment. Prints what it saw: the same lines plain and under `run`.
argv[1]: the log file."""
import os
import sys

import torch

import npu_doctor   # the program's own: npu_doctor.py beside this file


def other_descriptors(keep):
    """Open descriptors above 2 but `keep` (listing /proc/self/fd opens one more: gone by now)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd != keep:
            try:
                os.fstat(fd)
            except OSError:
                continue
            found.append(fd)
    return found


os.closerange(3, 4096)
log = open(sys.argv[1], "w")
print("own module:", getattr(npu_doctor, "VALUE", "missing"), npu_doctor.step())
print("excepthook is the interpreter's:", sys.excepthook is sys.__excepthook__)
print("npu-doctor variables seen:", sorted(k for k in os.environ if k in ("NPUD_CAPTURE", "NPUD_STEPS", "NPUD_STATUS")))

torch.manual_seed(0)
model = torch.nn.Linear(6, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    loss = model(torch.randn(4, 6)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    if step == 2:
        for fd in other_descriptors(log.fileno()):
            os.close(fd)
    if step == 3:
        for fd in other_descriptors(log.fileno()):
            os.dup2(log.fileno(), fd)
    log.write("step %d %s\n" % (step, loss.item().hex()))
    log.flush()
    npu_doctor.step()
    if step == 3:
        log.close()
        with open(sys.argv[1]) as f:
            lines = f.read().splitlines()
        print("log: %d lines, all the program's: %s" % (len(lines), all(line.startswith("step ") for line in lines)))
        print("own step() calls:", len(npu_doctor.marks), flush=True)
        sys.exit(3)
    opt.step()
