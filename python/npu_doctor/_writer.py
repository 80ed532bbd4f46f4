"""Append-only writer of the capture file (docs/formats/capture.md).

Every event is one line written with a single os.write() on an unbuffered descriptor,
so a program killed at any moment leaves complete lines plus at most one cut-off line.
"""

import os
import threading


class EventWriter:
    def __init__(self, path, exclusive=False):
        flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
        self._fd = os.open(path, flags, 0o644)
        self._first = True
        self._lock = threading.Lock()
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
            self._write_all(line.encode("utf-8", "backslashreplace"))

    def close(self):
        with self._lock:
            if self._fd < 0:
                return
            try:
                self._write_all(b"[\n]\n" if self._first else b"]\n")
            finally:
                os.close(self._fd)
                self._fd = -1

    def abandon(self):
        """Closes the descriptor without the closing bracket (forked children)."""
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    def _write_all(self, data):
        # Regular files take the whole buffer in one write(); the loop is for safety only.
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
