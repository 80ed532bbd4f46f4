"""Append-only writer of the capture file (docs/formats/capture.md).

Events are whole lines, buffered and written with one os.write() per flush on an unbuffered
descriptor: when the buffer holds 64 KiB, when 0.2 s passed since the last flush, at each
step end and at close. A write per event cost 5-8 us, more than the rest of an op's record;
a program killed at any moment still leaves complete lines plus at most one cut-off line,
and loses at most the events of the last 0.2 s / 64 KiB (SIGKILL, os._exit; an exception,
Ctrl-C and a normal exit flush).
"""

import os
import threading
import time

FLUSH_BYTES = 1 << 16
FLUSH_SECONDS = 0.2


class EventWriter:
    def __init__(self, path, exclusive=False):
        flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
        self._fd = os.open(path, flags, 0o644)
        self._first = True
        self._lock = threading.Lock()
        self._buf = []
        self._size = 0
        self._flushed = time.monotonic()
        self.path = path

    @property
    def closed(self):
        return self._fd < 0

    def write_event(self, json_text):
        """json_text: one event as compact JSON, without separator or newline."""
        with self._lock:
            if self._fd < 0:
                return
            if self._first:
                line = "[\n" + json_text + "\n"
                self._first = False
            else:
                line = "," + json_text + "\n"
            self._buf.append(line)
            self._size += len(line)
            if self._size >= FLUSH_BYTES or time.monotonic() - self._flushed >= FLUSH_SECONDS:
                self._flush_locked()

    def flush(self):
        with self._lock:
            if self._fd >= 0:
                self._flush_locked()

    def close(self):
        with self._lock:
            if self._fd < 0:
                return
            try:
                self._flush_locked()
                self._write_all(b"[\n]\n" if self._first else b"]\n")
            finally:
                os.close(self._fd)
                self._fd = -1

    def abandon(self):
        """Closes the descriptor without the closing bracket (forked children: the buffer
        holds the parent's events, which the parent writes)."""
        self._buf = []
        self._size = 0
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def _flush_locked(self):
        self._flushed = time.monotonic()
        if not self._buf:
            return
        data = "".join(self._buf).encode("utf-8", "backslashreplace")
        self._buf = []
        self._size = 0
        self._write_all(data)

    def _write_all(self, data):
        # Regular files take the whole buffer in one write(); the loop is for safety only.
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
