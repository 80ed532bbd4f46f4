"""Tensor metadata in the capture's op events: ids that follow a tensor from op to op, storage
identities (aliasing, views), and the JSON text of each (dtype, shape, strides, device) layout,
made once (docs/formats/capture.md "Events").
"""

import weakref

from ._errors import Deaths, pass_on_async


class TensorEncoder:
    def __init__(self):
        # Addresses are reused once memory is freed: an entry stands only while what it names
        # lives (a new tensor at a freed tensor's address, a host batch in a freed device
        # buffer, are not the old ones: tensor_json).
        self._ids = {}         # TensorImpl address -> (tensor id, weakref to the tensor)
        self._storages = {}    # storage base address -> storage id
        self._freed = Deaths()   # storages watched: their (base, id) entry goes when they are freed
        self.watch_storages = False   # torch keeps one Python object per storage (2.x): start()
        self._next_id = 1
        self._next_storage = 1
        self._layouts = {}     # (dtype, shape, strides, device) -> its JSON text (tensor_json)
        self.grad_in = False   # an input tensor_json saw requires grad (reset by its caller)
        self.Tensor = None     # torch.Tensor, from start()

    def start(self, torch, watch_storages):
        self.Tensor = torch.Tensor
        self.watch_storages = watch_storages

    def tensor_json(self, t, pos, seen_ids, seen_storages, is_output):
        """One tensor's metadata; registers ids. Outputs get fresh ids unless they are one
        of the op's inputs (in-place, out=); their storage is an input's (a view) or new.
        Runs for every tensor of every recorded op: each attribute is read once, and the
        text of a (dtype, shape, strides, device) layout is made once."""
        if self._freed.dead:
            self._forget_freed()
        cdata = t._cdata
        rg = ""
        if is_output:
            tid = seen_ids.get(cdata)
            if tid is None:   # else an input's (in-place, out=): its entry stands
                tid = self._next_id
                self._next_id = tid + 1
                self._ids[cdata] = (tid, _weak(t))
        else:
            entry = self._ids.get(cdata)
            if entry is None or entry[1]() is not t:   # new, or a freed tensor's address
                tid = self._next_id
                self._next_id = tid + 1
                self._ids[cdata] = (tid, _weak(t))
            else:
                tid = entry[0]
            seen_ids[cdata] = tid
            if t.requires_grad:
                self.grad_in = True
                rg = ',"rg":1'   # a parameter, or computed from one: device data once the program moves
        try:
            key = (t.dtype, t.shape, t.stride(), t.device)
        except Exception as e:   # no strides (sparse on torch 2)
            pass_on_async(e)
            key = (t.dtype, t.shape, None, t.device)
        layout = self._layouts.get(key)
        try:
            offset = t.storage_offset()
            # layout[2]: the element size, known with the layout
            base = t.data_ptr() - offset * (layout[2] if layout is not None else t.element_size())
        except Exception as e:
            pass_on_async(e)
            offset, base = 0, 0
        if base == 0:   # no storage (empty, meta, sparse): an identity of its own
            sid = self._next_storage
            self._next_storage += 1
            sparse = _sparse_layout(t)
            if sparse is not None:   # torch 1.x gives sparse tensors made-up strides
                key = (t.dtype, t.shape, sparse, t.device)
                layout = self._layouts.get(key)
        elif is_output:
            sid = seen_storages.get(base)
            if sid is None:
                sid = self._next_storage
                self._next_storage += 1
                self._watch_storage(t, base, sid)
            self._storages[base] = sid
        else:
            sid = self._storages.get(base)
            if sid is None:
                sid = self._next_storage
                self._next_storage += 1
                self._storages[base] = sid
                self._watch_storage(t, base, sid)
            seen_storages[base] = sid
        if layout is None:
            layout = self._layout_json(key, t)
        return '{"arg":%d,"id":%d,"storage":%d,%s,"offset":%d,%s%s}' % (pos, tid, sid, layout[0], offset, layout[1], rg)

    def stand_for(self, result, recorded):
        """`result`, what the program got from a call the capture ran twice (_tensor_patches'
        mode-sensitive linear algebra: the program gets the plain call's result, the capture
        records a second call), takes the identity of `recorded`, the recorded call's result:
        the ops that read it then read that op's output, so what the program computes from it
        keeps where it came from (analysis/placement.hpp; `float(sum(p.grad.norm() ...))`,
        issue 40). Tensors and tuples of tensors (eigh's values and vectors), pair by pair."""
        self._forget_freed()
        Tensor = self.Tensor
        if isinstance(result, Tensor):
            pairs = [(result, recorded)]
        elif isinstance(result, tuple) and isinstance(recorded, tuple) and len(result) == len(recorded):
            pairs = list(zip(result, recorded))
        else:
            return
        for mine, theirs in pairs:
            if not (isinstance(mine, Tensor) and isinstance(theirs, Tensor)):
                continue
            entry = self._ids.get(theirs._cdata)
            if entry is not None and entry[1]() is theirs:
                self._ids[mine._cdata] = (entry[0], _weak(mine))
            try:
                base_theirs = theirs.data_ptr() - theirs.storage_offset() * theirs.element_size()
                base_mine = mine.data_ptr() - mine.storage_offset() * mine.element_size()
            except Exception as e:   # no storage (sparse, meta)
                pass_on_async(e)
                continue
            sid = self._storages.get(base_theirs)
            if sid is not None and base_mine and base_theirs:
                self._storages[base_mine] = sid
                self._watch_storage(mine, base_mine, sid)

    def _watch_storage(self, t, base, sid):
        """Forget base -> sid when the storage is freed (torch 2.x; torch 1.x makes a new storage
        object per call, so an address stays its first storage's there)."""
        if not self.watch_storages:
            return
        try:
            self._freed.watch(t.untyped_storage(), (base, sid))
        except Exception as e:
            pass_on_async(e)

    def _forget_freed(self):
        """The storages freed since: their addresses name no storage any more (done here, in
        the shim's own frames, rather than in a callback at the free: _errors.Deaths)."""
        for _, (base, sid) in self._freed.take():
            if self._storages.get(base) == sid:
                del self._storages[base]

    def _layout_json(self, key, t):
        """Strided tensors: their strides; sparse ones: their layout instead ("sparse_coo")."""
        dtype, shape, strides, device = key
        if isinstance(strides, str):
            arrangement = '"layout":"%s"' % strides
        else:
            arrangement = '"strides":%s' % ("[]" if strides is None else str(list(strides)))
        try:
            size = t.element_size()
        except Exception as e:
            pass_on_async(e)
            size = 0
        layout = ('"dtype":"%s","shape":%s,%s' % (str(dtype).replace("torch.", ""), str(list(shape)), arrangement),
                  '"device":"%s"' % device, size)
        if len(self._layouts) > 100000:   # a program whose shapes never repeat
            self._layouts.clear()
        self._layouts[key] = layout
        return layout

    def add_tensors(self, a, pos, out, seen_ids, seen_storages, is_output):
        """Appends the JSON of a tensor argument, or of each tensor in a list argument (each
        element takes a position); returns the next position, or None when `a` is neither."""
        Tensor = self.Tensor
        if isinstance(a, Tensor):
            out.append(self.tensor_json(a, pos, seen_ids, seen_storages, is_output))
            return pos + 1
        if isinstance(a, (list, tuple)):
            for e in a:
                if isinstance(e, Tensor):
                    out.append(self.tensor_json(e, pos, seen_ids, seen_storages, is_output))
                pos += 1
            return pos
        return None


def _never():
    return None


def _weak(t):
    """A weak reference to a tensor, or one that never matches (a tensor type without weakrefs)."""
    try:
        return weakref.ref(t)
    except TypeError as e:
        pass_on_async(e)
        return _never


def _sparse_layout(t):
    """"sparse_coo", "sparse_csr"... for a tensor that is not strided, else None."""
    try:
        layout = str(t.layout)
    except Exception as e:
        pass_on_async(e)
        return None
    return None if layout == "torch.strided" else layout.replace("torch.", "")
