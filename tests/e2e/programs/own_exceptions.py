"""What the program raises for itself, and how its compiled code runs, stay its own while steps
are recorded (issue 42): exceptions its signal handlers raise land inside the capture's frames
most of a recorded step and must reach it (a SIGALRM handler raising its Budget exception, a
one-shot time budget; a SIGUSR1 handler, a bound method sent by a threading.Timer, whose helper
raises Preempted); recursion a few frames under its own limit must not overflow in the
capture's frames; torch.compile'd code (a backend that counts its calls) runs compiled.
Prints counts and outcomes only: the same lines plain and under `run`.
argv[1]: frames of slack under the recursion limit (default 16: torch's own wrappers around a
dispatch mode, and the capture's first frames, run on the program's stack)."""
import os
import signal
import sys
import threading
import time

import torch

SLACK = int(sys.argv[1]) if len(sys.argv) > 1 else 16
BUDGETS_PER_STEP = 6
WAIT_SECONDS = 3.0   # an exception that never arrives (swallowed) costs this much, then counts as lost


class Budget(Exception):
    pass


class Preempted(RuntimeError):
    pass


def on_alarm(signum, frame):
    raise Budget()


class Preemption:
    """A scheduler's preemption notice: the handler is a bound method, the raise is in a helper."""

    def on_signal(self, signum, frame):
        self.preempt()

    def preempt(self):
        raise Preempted("preempted")


signal.signal(signal.SIGALRM, on_alarm)
signal.signal(signal.SIGUSR1, Preemption().on_signal)

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(8, 16)


def forward_backward():
    model(x).pow(2).mean().backward()


def work_until(kind, arm):
    """Runs forward and backward until `kind` arrives: whether it did."""
    deadline = time.monotonic() + WAIT_SECONDS
    try:
        arm()
        while time.monotonic() < deadline:
            forward_backward()
    except kind:
        return True
    return False


def alarm():
    signal.setitimer(signal.ITIMER_REAL, 0.002)


def preemption():
    threading.Timer(0.002, os.kill, (os.getpid(), signal.SIGUSR1)).start()


def depth():
    frame, n = sys._getframe(), 0
    while frame is not None:
        n += 1
        frame = frame.f_back
    return n


def at_depth(n, fn):
    return fn() if n == 0 else at_depth(n - 1, fn)


def lowest_limit():
    """The lowest recursion limit under which forward and backward run 40 frames down."""
    limit = depth() + 45
    while True:
        sys.setrecursionlimit(limit)
        try:
            at_depth(40, forward_backward)
            return limit
        except RecursionError:
            limit += 1
        finally:
            sys.setrecursionlimit(10000)


def near_the_limit(limit):
    sys.setrecursionlimit(limit + SLACK)
    try:
        at_depth(40, forward_backward)
        return "ok"
    except RecursionError as e:
        return "RecursionError: %s" % e
    finally:
        sys.setrecursionlimit(10000)


compiled = None
calls = [0]
if hasattr(torch, "compile"):
    def counting_backend(gm, example_inputs):
        def run(*args):
            calls[0] += 1
            return gm.forward(*args)
        return run

    compiled = torch.compile(torch.nn.Linear(16, 4), backend=counting_backend)

limit = lowest_limit()
for step in range(5):
    outcome = near_the_limit(limit)
    ran_compiled = "-"
    if compiled is not None:
        before = calls[0]
        compiled(x).sum().backward()
        ran_compiled = calls[0] > before
    budgets = sum(work_until(Budget, alarm) for _ in range(BUDGETS_PER_STEP))
    preempted = sum(work_until(Preempted, preemption) for _ in range(BUDGETS_PER_STEP))
    opt.step()
    opt.zero_grad()
    print("step %d: budgets %d/%d, preemptions %d/%d, recursion %s, compiled code ran %s"
          % (step, budgets, BUDGETS_PER_STEP, preempted, BUDGETS_PER_STEP, outcome, ran_compiled), flush=True)
