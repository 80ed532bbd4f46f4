"""Real tensor -> fp32 shadow tensor.

Keyed by id() of the real tensor; its entry goes once the tensor dies (a tensor's `==` is
elementwise, so it cannot key a WeakKeyDictionary), noted without a callback of the shim's
(_errors.Deaths) and handled at the next lookup. Each entry also points at a
*store*: what the shadow run knows about the real tensor's storage. A store starts as an
alias (the shadow of every tensor on that storage is the real tensor itself: parameters,
inputs, anything computed exactly in fp32 from aliases) and becomes separate when the
shadow has to hold other values: the first low-precision result, or right before the
first in-place op whose two sides differ (copy-on-write: the real storage is cloned once,
and each alias entry rebuilds its shadow as the same view of the clone when next used).
A tensor first seen on a storage with a separate shadow (`.data`, a tensor autograd saved
under a new TensorImpl) gets the same view of that shadow storage.

`lowp` lives on the store as the dtype does on a device: the values were rounded to the
low-precision dtype (autocast would have made this storage fp16/bf16).
"""

import torch

from ._errors import Deaths, pass_on_async

LOWP_DTYPES = (torch.float16, torch.bfloat16)


class Store:
    __slots__ = ("ptr", "base", "lowp", "refs")

    def __init__(self, ptr, base=None, lowp=False):
        self.ptr = ptr
        self.base = base     # None: aliased (shadow = real); else a tensor on the shadow storage
        self.lowp = lowp
        self.refs = 0


class Entry:
    __slots__ = ("ref", "shadow", "store")

    def __init__(self, ref, shadow, store):
        self.ref = ref
        self.shadow = shadow  # None: derived from the store (aliased, or a view of its clone)
        self.store = store


def storage_ptr(t):
    try:
        if t.numel() == 0 and t.storage_offset() == 0:
            return 0
        return t.data_ptr() - t.storage_offset() * t.element_size()
    except Exception as e:
        pass_on_async(e)
        return 0


def storage_flat(t):
    """The whole storage under `t` as a 1-D tensor of t's dtype (a view, no copy)."""
    if hasattr(t, "untyped_storage"):   # torch >= 2.0: TypedStorage warns that it is deprecated
        n = t.untyped_storage().nbytes() // t.element_size()
    else:
        n = t.storage().size()
    return t.as_strided((n,), (1,), 0)


class ShadowMap:
    def __init__(self):
        self._entries = {}   # id(real) -> Entry
        self._stores = {}    # storage base address -> Store
        self._deaths = Deaths()

    def clear(self):
        self._entries = {}
        self._stores = {}
        self._deaths.clear()

    def __len__(self):
        return len(self._entries)

    # --- lookups -----------------------------------------------------------------------
    def entry(self, real):
        self._forget_dead()
        e = self._entries.get(id(real))
        if e is None or e.ref() is not real:
            e = self._first_seen(real)
        return e

    def shadow(self, real):
        """(shadow tensor, aliased): aliased means the shadow is the real tensor itself."""
        e = self.entry(real)
        if e.shadow is not None:
            return e.shadow, False
        st = e.store
        if st is None or st.base is None:
            return real, True
        e.shadow = st.base.as_strided(real.size(), real.stride(), real.storage_offset())
        return e.shadow, False

    def is_lowp(self, real):
        if real.dtype in LOWP_DTYPES:
            return True
        st = self.entry(real).store
        return st is not None and st.lowp

    # --- updates -----------------------------------------------------------------------
    def separate(self, real):
        """Copy-on-write: make sure the shadow of `real` is not the real tensor before an
        op writes into one side only."""
        e = self.entry(real)
        if e.shadow is not None:
            return
        st = e.store
        if st is None:
            e.shadow = real.detach().clone() if real.dtype not in LOWP_DTYPES else real.float()
        elif st.base is None:
            flat = storage_flat(real)
            st.base = flat.clone() if real.dtype not in LOWP_DTYPES else flat.float()

    def set_output(self, real, shadow, fresh, lowp):
        """Registers the shadow of an op's output. `fresh`: the op allocated `real`'s
        storage (not a view, not in-place), so any store at that address is stale.
        `shadow` None: the shadow is the real tensor (exact fp32 result of aliases)."""
        self._forget_dead()
        ptr = storage_ptr(real)
        if fresh or ptr not in self._stores:
            if ptr == 0:
                st = None
            else:
                st = Store(ptr, shadow, lowp)
                self._stores[ptr] = st
            e = self._add(real, shadow, st)
            if st is None and shadow is None and real.dtype in LOWP_DTYPES:
                e.shadow = real.float()
            return
        st = self._stores[ptr]
        if shadow is None or (st.base is None and _same_memory(shadow, real)):
            self._add(real, None, st)
        else:
            self._add(real, shadow, st)

    def mark_lowp(self, real, lowp):
        st = self.entry(real).store
        if st is not None:
            st.lowp = lowp

    # --- internals ---------------------------------------------------------------------
    def _first_seen(self, real):
        ptr = storage_ptr(real)
        st = self._stores.get(ptr) if ptr else None
        if st is None and ptr:
            st = Store(ptr)
            if real.dtype in LOWP_DTYPES:    # the program's own fp16/bf16 tensor: fp32 copy
                st.base = storage_flat(real).float()
                st.lowp = True
            self._stores[ptr] = st
        e = self._add(real, None, st)
        if st is None and real.dtype in LOWP_DTYPES:
            e.shadow = real.float()
        return e

    def _add(self, real, shadow, st):
        key = id(real)
        old = self._entries.get(key)
        if old is not None and old.ref() is real:
            if old.store is not None:
                old.store.refs -= 1
        e = Entry(self._deaths.watch(real, key), shadow, st)
        if st is not None:
            st.refs += 1
        self._entries[key] = e
        return e

    def _forget_dead(self):
        """Drops the entries of the tensors that died since, and their stores' last references."""
        if not self._deaths.dead:
            return
        entries, stores = self._entries, self._stores
        for ref, key in self._deaths.take():
            e = entries.get(key)
            if e is not None and e.ref is ref:
                del entries[key]
                s = e.store
                if s is not None:
                    s.refs -= 1
                    if s.refs <= 0 and stores.get(s.ptr) is s:
                        del stores[s.ptr]


def _same_memory(a, b):
    try:
        return a.data_ptr() == b.data_ptr()
    except Exception as e:
        pass_on_async(e)
        return False
