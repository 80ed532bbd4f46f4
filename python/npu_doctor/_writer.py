"""Append-only writer of the capture file (docs/formats/capture.md), and the shim's hold on
the files it writes into (OwnedFile).

Events are whole lines, buffered and written with one os.write() per flush on an unbuffered
descriptor: when the buffer holds 64 KiB, when 0.2 s passed since the last flush, at each
step end and at close. A write per event cost 5-8 us, more than the rest of an op's record;
a program killed at any moment still leaves complete lines plus at most one cut-off line,
and loses at most the events of the last 0.2 s / 64 KiB (SIGKILL, os._exit; an exception,
Ctrl-C and a normal exit flush).

The descriptor number is the program's to reuse (issue 42 F-1): a daemon-style program
closes every descriptor above 2 (os.closerange), another dup2()s over it or closes just that
one, and its next open() gets the number. So the shim knows its file by identity (device and
inode), checks it before each write and close, and never writes to nor closes a descriptor
that leads elsewhere: it reopens the file by its path, or gives up (FileLost).
"""

import os
import threading
import time

from ._errors import pass_on_async

FLUSH_BYTES = 1 << 16
FLUSH_SECONDS = 0.2


class FileLost(OSError):
    """The program closed or replaced the shim's descriptor and the file cannot be reopened
    by its path (removed, replaced): what was written stays, nothing more is."""


class OwnedFile:
    """A file the shim writes, held by its identity rather than by a descriptor number.
    Bytes an interruption left unwritten (a signal handler's exception raised inside a
    write: the program's, passed on) are written first the next time, so the file never
    holds a line twice or a line cut in its middle."""

    def __init__(self, path, flags):
        self.path = path
        self._fd = os.open(path, flags | os.O_WRONLY | os.O_CLOEXEC, 0o644)
        st = os.fstat(self._fd)
        self._identity = (st.st_dev, st.st_ino)
        self.unwritten = b""
        self.closed = False

    def empty(self):
        """Nothing written yet (and nothing waiting to be)."""
        return not self.unwritten and os.fstat(self._checked_fd()).st_size == 0

    def write(self, data):
        """Writes all of `data` (bytes) after what an earlier write left unwritten."""
        fd = self._checked_fd()
        data = self.unwritten + data
        start = os.fstat(fd).st_size
        self.unwritten = data
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view):]
        except BaseException:
            # The file's size says what got written (only the shim writes it), even when the
            # exception came between a write() and its count.
            done = os.fstat(fd).st_size - start
            self.unwritten = data[max(done, 0):]
            raise
        self.unwritten = b""

    def close(self):
        """Closes the descriptor when it is still the file's; never one that leads elsewhere."""
        if self.closed:
            return
        self.closed = True
        fd, self._fd = self._fd, -1
        if fd >= 0 and self._is_mine(fd):
            try:
                os.close(fd)
            except OSError as e:
                pass_on_async(e)   # (a TimeoutError is an OSError: a signal handler's goes on)

    def _checked_fd(self):
        """The descriptor, when it still leads to the file; else the file reopened by its path."""
        if self.closed:
            raise FileLost("%s is closed" % self.path)
        if self._fd >= 0 and self._is_mine(self._fd):
            return self._fd
        self._fd = -1   # the program's now: never written to, never closed
        fd = self._reopen()
        if fd < 0:
            self.closed = True
            raise FileLost("the program closed the descriptor of %s, which can no longer be reopened" % self.path)
        self._fd = fd
        return fd

    def _is_mine(self, fd):
        try:
            st = os.fstat(fd)
        except OSError as e:   # closed by the program
            pass_on_async(e)
            return False
        return (st.st_dev, st.st_ino) == self._identity

    def _reopen(self):
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as e:
            pass_on_async(e)
            return -1
        if not self._is_mine(fd):   # another file at that path now
            os.close(fd)
            return -1
        return fd


class EventWriter:
    def __init__(self, path, exclusive=False):
        self._file = OwnedFile(path, os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC))
        self._lock = threading.Lock()
        self._buf = []       # events (JSON texts) not yet handed to the file
        self._size = 0
        self._flushed = time.monotonic()
        self.path = path

    @property
    def closed(self):
        return self._file.closed

    def write_event(self, json_text):
        """json_text: one event as compact JSON, without separator or newline. Appending it is
        the one step that records it (the separators are made at the flush), so an exception
        landing here loses at most this event, never the file's shape."""
        with self._lock:
            if self._file.closed:
                return
            self._buf.append(json_text)
            self._size += len(json_text) + 2
            if self._size >= FLUSH_BYTES or time.monotonic() - self._flushed >= FLUSH_SECONDS:
                self._flush_locked()

    def flush(self):
        with self._lock:
            if not self._file.closed:
                self._flush_locked()

    def close(self):
        with self._lock:
            if self._file.closed:
                return
            try:
                self._flush_locked()
                self._file.write(b"[\n]\n" if self._file.empty() else b"]\n")
            finally:
                self._file.close()

    def abandon(self):
        """Gives the file up without the closing bracket (forked children: the buffer holds the
        parent's events, which the parent writes)."""
        self._buf = []
        self._size = 0
        self._file.close()

    def _flush_locked(self):
        self._flushed = time.monotonic()
        if not self._buf:
            return
        n = len(self._buf)
        # "[" opens the array before the first event; every later one starts with ","
        head = "[\n" if self._file.empty() else ","
        data = (head + "\n,".join(self._buf[:n]) + "\n").encode("utf-8", "backslashreplace")
        # The events leave the buffer in the same step as their bytes join what the file has
        # still to write: no call between, and a signal handler's exception (issue 42 F-2) is
        # raised at a call, so it loses no event here (it lost the header and the first ops when
        # it landed between taking the buffer and writing it).
        self._file.unwritten, self._buf, self._size = self._file.unwritten + data, self._buf[n:], 0
        self._file.write(b"")
