#include "numeric/torch_pickle.hpp"

#include <bit>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/input_error.hpp"

namespace npud {

bool PickledTensor::contiguous() const {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && stride[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

namespace {

// The names torch.save pickles for tensors, each resolved when its GLOBAL is read.
enum class Callable : uint8_t {
  None, RebuildV2, RebuildV3, RebuildParameter, RebuildNpu, NpuFormat, FormatByName, OrderedDict, StorageClass,
  UntypedStorage, DTypeObj
};

struct NamedDType { std::string_view name; DType dtype; };
// torch.<X>Storage: the legacy typed storages torch still writes for the classic dtypes.
constexpr NamedDType kStorageClasses[] = {
    {"FloatStorage", DType::F32}, {"DoubleStorage", DType::F64}, {"HalfStorage", DType::F16},
    {"BFloat16Storage", DType::BF16}, {"LongStorage", DType::I64}, {"IntStorage", DType::I32},
    {"ShortStorage", DType::I16}, {"CharStorage", DType::I8}, {"ByteStorage", DType::U8}, {"BoolStorage", DType::Bool}};
// torch.<dtype>: the dtype argument of _rebuild_tensor_v3 (dtypes without a typed storage).
constexpr NamedDType kDTypes[] = {
    {"float32", DType::F32}, {"float", DType::F32}, {"float64", DType::F64}, {"double", DType::F64},
    {"float16", DType::F16}, {"half", DType::F16}, {"bfloat16", DType::BF16}, {"int8", DType::I8},
    {"int16", DType::I16}, {"short", DType::I16}, {"int32", DType::I32}, {"int", DType::I32},
    {"int64", DType::I64}, {"long", DType::I64}, {"uint8", DType::U8}, {"uint16", DType::U16},
    {"uint32", DType::U32}, {"uint64", DType::U64}, {"bool", DType::Bool}};

// Dtypes torch saves that compare does not measure: their tensors are read (shape, bounds)
// and reported as not comparable; element sizes keep the bounds checks exact.
struct OtherDType { std::string_view name; std::string_view dtype; uint8_t size; };
constexpr OtherDType kOtherStorageClasses[] = {
    {"ComplexFloatStorage", "complex64", 8}, {"ComplexDoubleStorage", "complex128", 16}};
constexpr OtherDType kOtherDTypes[] = {
    {"complex32", "complex32", 4}, {"chalf", "complex32", 4}, {"complex64", "complex64", 8},
    {"cfloat", "complex64", 8}, {"complex128", "complex128", 16}, {"cdouble", "complex128", 16},
    {"float8_e4m3fn", "float8_e4m3fn", 1}, {"float8_e5m2", "float8_e5m2", 1},
    {"float8_e4m3fnuz", "float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", "float8_e5m2fnuz", 1},
    {"float8_e8m0fnu", "float8_e8m0fnu", 1}};

struct Value {
  enum class Kind : uint8_t { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor } kind = Kind::None;
  Callable callable = Callable::None;  // Global
  DType dtype = DType::F32;            // Global (StorageClass, DTypeObj), Storage (typed)
  std::string_view other;              // ... or, when set, a dtype compare does not measure
  uint8_t other_size = 0;              //     and its element size
  bool typed = true;                   // Storage: false for an UntypedStorage (bytes)
  int64_t i = 0;                       // Int, Bool; Storage: numel; Tensor: index into tensors
  double f = 0;
  std::string_view s;                  // Str (a slice of the pickle); Storage: key
  std::vector<uint32_t> items;         // Tuple, List; Dict: key, value, key, value...
};

std::string_view kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::None: return "None";
    case Value::Kind::Bool: return "a bool";
    case Value::Kind::Int: return "an int";
    case Value::Kind::Float: return "a float";
    case Value::Kind::Str: return "a string";
    case Value::Kind::Tuple: return "a tuple";
    case Value::Kind::List: return "a list";
    case Value::Kind::Dict: return "a dict";
    case Value::Kind::Global: return "a global";
    case Value::Kind::Storage: return "a storage";
    case Value::Kind::Tensor: return "a tensor";
  }
  return "?";
}

// Printable and short: names from the file go into error messages.
std::string shown(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 80)) {
    auto u = static_cast<unsigned char>(c);
    out += u >= 0x20 && u < 0x7f && c != '\'' ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  if (s.size() > 80) out += "...";
  return out;
}

class Vm {
 public:
  Vm(std::string_view p, const std::string& name, uint64_t base) : p_(p), name_(name), base_(base) {}

  TorchPickle run() {
    uint32_t result = execute();
    TorchPickle out;
    uint64_t visits = 0;
    walk(result, "", 0, visits, out);
    return out;
  }

 private:
  [[noreturn]] void fail(uint64_t at, const std::string& what) const {
    throw InputError(name_, base_ + at, fmt::format("{} (data.pkl byte {})", what, at));
  }
  [[noreturn]] void refuse(uint64_t at, const std::string& what) const {
    fail(at, what + "; npu-doctor reads only the tensors torch.save writes and never runs pickle code, so the file "
                    "was refused and nothing in it was run");
  }

  // --- reading the opcode stream ---
  void need(uint64_t n) const {
    if (n > p_.size() - pos_) fail(p_.size(), "data.pkl ends inside an opcode's argument (truncated pickle)");
  }
  uint64_t le(int n) {
    need(uint64_t(n));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | uint8_t(p_[pos_ + size_t(i)]);
    pos_ += size_t(n);
    return v;
  }
  std::string_view bytes(uint64_t n) {
    need(n);
    std::string_view s = p_.substr(pos_, size_t(n));
    pos_ += size_t(n);
    return s;
  }
  std::string_view line() {
    size_t nl = p_.find('\n', pos_);
    if (nl == std::string_view::npos) fail(p_.size(), "data.pkl ends inside a GLOBAL's name (truncated pickle)");
    std::string_view s = p_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return s;
  }

  // --- values ---
  uint32_t make(Value v) {
    if (values_.size() >= kMaxPickleObjects)
      fail(op_at_, fmt::format("more than {} objects in data.pkl", kMaxPickleObjects));
    values_.push_back(std::move(v));
    return uint32_t(values_.size() - 1);
  }
  uint32_t make(Value::Kind k) {
    Value v;
    v.kind = k;
    return make(std::move(v));
  }
  Value& at(uint32_t i) { return values_[i]; }
  // Every container item was pushed first: bounding pushes bounds the items a BINGET-heavy
  // pickle can make (2 bytes of pickle per 4-byte item otherwise).
  void push(uint32_t v) {
    if (++pushes_ > kMaxPickleStackPushes)
      fail(op_at_, fmt::format("more than {} values pushed by data.pkl", kMaxPickleStackPushes));
    stack_.push_back(v);
  }
  uint32_t pop() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      fail(op_at_, "the pickle pops from an empty stack (malformed pickle)");
    uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back()))
      fail(op_at_, "the pickle reads an empty stack (malformed pickle)");
    return stack_.back();
  }
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) fail(op_at_, "the pickle closes a MARK it never opened (malformed pickle)");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + std::ptrdiff_t(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  uint32_t tuple(std::vector<uint32_t> items) {
    Value v;
    v.kind = Value::Kind::Tuple;
    v.items = std::move(items);
    return make(std::move(v));
  }
  void memo_put(uint64_t index) {
    if (index >= kMaxPickleObjects) fail(op_at_, fmt::format("memo index {} is over the limit of {}", index, kMaxPickleObjects));
    if (memo_.size() <= index) memo_.resize(size_t(index) + 1, UINT32_MAX);
    memo_[size_t(index)] = top();
  }
  void memo_get(uint64_t index) {
    if (index >= memo_.size() || memo_[size_t(index)] == UINT32_MAX)
      fail(op_at_, fmt::format("the pickle reads memo slot {}, which was never written (malformed pickle)", index));
    push(memo_[size_t(index)]);
  }
  void add_to_list(uint32_t list, const std::vector<uint32_t>& items) {
    if (at(list).kind != Value::Kind::List)
      refuse(op_at_, fmt::format("APPEND(S) on {} (torch appends only to lists)", kind_name(at(list).kind)));
    for (uint32_t v : items) at(list).items.push_back(v);
  }
  void add_to_dict(uint32_t dict, const std::vector<uint32_t>& kv) {
    if (at(dict).kind != Value::Kind::Dict)
      refuse(op_at_, fmt::format("SETITEM(S) on {} (torch sets items only on dicts)", kind_name(at(dict).kind)));
    if (kv.size() % 2) fail(op_at_, "SETITEMS with an odd number of keys and values (malformed pickle)");
    for (uint32_t v : kv) at(dict).items.push_back(v);
  }

  // GLOBAL / STACK_GLOBAL: only torch's tensor names resolve; everything else is refused here.
  uint32_t global(std::string_view module, std::string_view name) {
    Value v;
    v.kind = Value::Kind::Global;
    if (module == "torch._utils" && name == "_rebuild_tensor_v2") v.callable = Callable::RebuildV2;
    else if (module == "torch._utils" && name == "_rebuild_tensor_v3") v.callable = Callable::RebuildV3;
    else if (module == "torch._utils" && name == "_rebuild_parameter") v.callable = Callable::RebuildParameter;
    // torch_npu's Tensor.__reduce_ex__ for a tensor on an NPU (what msprobe saves on Ascend):
    // _rebuild_tensor_v2's arguments of the tensor's CPU copy, plus its NPU storage format
    // (an int, a bool, or a torch_npu.npu._format.Format, an IntEnum pickled as Format(int)).
    else if (module == "torch_npu.utils.storage" && name == "_rebuild_npu_tensor") v.callable = Callable::RebuildNpu;
    else if (module == "torch_npu.npu._format" && name == "Format") v.callable = Callable::NpuFormat;
    // Some Pythons (3.11.0-3.11.4) pickle an enum member by name: getattr(Format, 'ND'). The
    // name resolves, but REDUCE accepts it only on (Format, a string): nothing is looked up.
    else if ((module == "__builtin__" || module == "builtins") && name == "getattr") v.callable = Callable::FormatByName;
    else if (module == "collections" && name == "OrderedDict") v.callable = Callable::OrderedDict;
    else if (module == "torch.storage" && name == "UntypedStorage") v.callable = Callable::UntypedStorage;
    else if (module == "torch") {
      for (const NamedDType& c : kStorageClasses)
        if (c.name == name) { v.callable = Callable::StorageClass; v.dtype = c.dtype; }
      for (const NamedDType& c : kDTypes)
        if (c.name == name) { v.callable = Callable::DTypeObj; v.dtype = c.dtype; }
      for (const OtherDType& c : kOtherStorageClasses)
        if (c.name == name) { v.callable = Callable::StorageClass; v.other = c.dtype; v.other_size = c.size; }
      for (const OtherDType& c : kOtherDTypes)
        if (c.name == name) { v.callable = Callable::DTypeObj; v.other = c.dtype; v.other_size = c.size; }
    }
    if (v.callable == Callable::None)
      refuse(op_at_, fmt::format("GLOBAL '{} {}' is not a name torch.save writes for tensors", shown(module),
                                 shown(name)));
    return make(std::move(v));
  }

  int64_t int_arg(uint32_t v, const char* what) {
    if (at(v).kind != Value::Kind::Int && at(v).kind != Value::Kind::Bool)
      refuse(op_at_, fmt::format("{} is {}, not an int", what, kind_name(at(v).kind)));
    return at(v).i;
  }
  std::vector<int64_t> dims_arg(uint32_t v, const char* what) {
    if (at(v).kind != Value::Kind::Tuple)
      refuse(op_at_, fmt::format("the tensor's {} is {}, not a tuple", what, kind_name(at(v).kind)));
    if (at(v).items.size() > size_t(kMaxTensorDims))
      fail(op_at_, fmt::format("the tensor has {} dimensions (at most {})", at(v).items.size(), kMaxTensorDims));
    std::vector<int64_t> out;
    for (uint32_t d : at(v).items) {
      int64_t n = int_arg(d, what);
      if (n < 0) fail(op_at_, fmt::format("a negative value ({}) in the tensor's {}", n, what));
      out.push_back(n);
    }
    return out;
  }

  // BINPERSID: ('storage', storage class, key, location, numel).
  uint32_t storage(uint32_t pid) {
    const Value& t = at(pid);
    if (t.kind != Value::Kind::Tuple || t.items.size() != 5 || at(t.items[0]).kind != Value::Kind::Str ||
        at(t.items[0]).s != "storage")
      refuse(op_at_, "a persistent id that is not torch's ('storage', class, key, location, numel) tuple");
    const Value& cls = at(t.items[1]);
    if (cls.kind != Value::Kind::Global ||
        (cls.callable != Callable::StorageClass && cls.callable != Callable::UntypedStorage))
      refuse(op_at_, "a persistent id whose storage class is not a torch storage");
    if (at(t.items[2]).kind != Value::Kind::Str || at(t.items[3]).kind != Value::Kind::Str)
      refuse(op_at_, "a persistent id whose storage key or location is not a string");
    int64_t numel = int_arg(t.items[4], "the storage's size");
    if (numel < 0) fail(op_at_, fmt::format("a storage of negative size {}", numel));
    Value v;
    v.kind = Value::Kind::Storage;
    v.typed = cls.callable == Callable::StorageClass;
    v.dtype = cls.dtype;
    v.other = cls.other;
    v.other_size = cls.other_size;
    v.s = at(t.items[2]).s;
    v.i = numel;
    if (v.s.empty() || v.s.size() > 64 || v.s.find_first_of("/\\") != std::string_view::npos)
      fail(op_at_, fmt::format("storage key '{}' is not a file name of the archive's data/ folder", shown(v.s)));
    return make(std::move(v));
  }

  uint32_t rebuild_tensor(bool v3, const std::vector<uint32_t>& a) {
    size_t base_args = v3 ? 7 : 6;
    if (a.size() != base_args && a.size() != base_args + 1)
      refuse(op_at_, fmt::format("_rebuild_tensor_{} called with {} arguments ({} or {} expected)", v3 ? "v3" : "v2",
                                 a.size(), base_args, base_args + 1));
    const Value& st = at(a[0]);
    if (st.kind != Value::Kind::Storage)
      refuse(op_at_, fmt::format("a tensor rebuilt from {} instead of a storage", kind_name(st.kind)));
    PickledTensor t;
    t.at = op_at_;
    t.storage_key = std::string(st.s);
    int64_t offset = int_arg(a[1], "the storage offset");
    if (offset < 0) fail(op_at_, fmt::format("negative storage offset {}", offset));
    t.storage_offset = uint64_t(offset);
    t.shape = dims_arg(a[2], "size");
    t.stride = dims_arg(a[3], "stride");
    if (t.shape.size() != t.stride.size())
      fail(op_at_, fmt::format("the tensor has {} sizes but {} strides", t.shape.size(), t.stride.size()));
    if (at(a[5]).kind != Value::Kind::Dict)
      refuse(op_at_, "a tensor whose backward hooks are not an (empty) OrderedDict");
    if (v3) {
      if (st.typed) refuse(op_at_, "_rebuild_tensor_v3 on a typed storage (torch passes an UntypedStorage)");
      const Value& d = at(a[6]);
      if (d.kind != Value::Kind::Global || d.callable != Callable::DTypeObj)
        refuse(op_at_, "_rebuild_tensor_v3's dtype argument is not a torch dtype");
      t.dtype = d.dtype;
      t.uncompared_dtype = std::string(d.other);
      t.element_bytes = d.other.empty() ? dtype_size(d.dtype) : d.other_size;
    } else {
      if (!st.typed) refuse(op_at_, "_rebuild_tensor_v2 on an UntypedStorage (torch passes a typed storage)");
      t.dtype = st.dtype;
      t.uncompared_dtype = std::string(st.other);
      t.element_bytes = st.other.empty() ? dtype_size(st.dtype) : st.other_size;
    }
    const uint64_t es = t.element_bytes;
    uint64_t storage_bytes;
    if (__builtin_mul_overflow(uint64_t(st.i), st.typed ? es : 1, &storage_bytes))
      fail(op_at_, "the storage's size in bytes overflows 64 bits");
    t.storage_bytes = storage_bytes;
    uint64_t count = 1, last = t.storage_offset;
    bool overflow = false;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      uint64_t step;
      overflow |= __builtin_mul_overflow(count, uint64_t(t.shape[d]), &count);
      if (t.shape[d] > 0) {
        overflow |= __builtin_mul_overflow(uint64_t(t.shape[d] - 1), uint64_t(t.stride[d]), &step);
        overflow |= __builtin_add_overflow(last, step, &last);
      }
    }
    if (overflow) fail(op_at_, "the tensor's element count or extent overflows 64 bits");
    t.count = count;
    if (count > 0) {
      uint64_t first_byte, span;
      if (__builtin_mul_overflow(t.storage_offset, es, &first_byte) ||
          __builtin_mul_overflow(last + 1, es, &span))
        fail(op_at_, "the tensor's extent in bytes overflows 64 bits");
      if (span > storage_bytes)
        fail(op_at_, fmt::format("the tensor (offset {}, size {}, stride {}) reaches byte {} of a storage of {} bytes",
                                 t.storage_offset, fmt::join(t.shape, "x"), fmt::join(t.stride, ","), span,
                                 storage_bytes));
      t.span_bytes = span - first_byte;
    }
    tensors_.push_back(std::move(t));
    Value v;
    v.kind = Value::Kind::Tensor;
    v.i = int64_t(tensors_.size() - 1);
    return make(std::move(v));
  }

  uint32_t reduce(uint32_t fn, uint32_t args) {
    const Value& f = at(fn);
    if (f.kind != Value::Kind::Global)
      refuse(op_at_, fmt::format("REDUCE calls {} (torch calls only its tensor-rebuild functions)", kind_name(f.kind)));
    if (at(args).kind != Value::Kind::Tuple)
      refuse(op_at_, fmt::format("REDUCE with {} as arguments (a tuple expected)", kind_name(at(args).kind)));
    std::vector<uint32_t> a = at(args).items;
    switch (f.callable) {
      case Callable::OrderedDict:
        if (!a.empty()) refuse(op_at_, "collections.OrderedDict called with arguments (torch calls it with none)");
        return make(Value::Kind::Dict);
      case Callable::RebuildV2: return rebuild_tensor(false, a);
      case Callable::RebuildV3: return rebuild_tensor(true, a);
      case Callable::RebuildNpu: {
        if (a.size() != 7 || (at(a[6]).kind != Value::Kind::Int && at(a[6]).kind != Value::Kind::Bool))
          refuse(op_at_, "torch_npu's _rebuild_npu_tensor called with other than _rebuild_tensor_v2's six arguments "
                         "and an NPU format");
        return rebuild_tensor(false, a);
      }
      case Callable::NpuFormat: {
        if (a.size() != 1 || at(a[0]).kind != Value::Kind::Int)
          refuse(op_at_, "torch_npu.npu._format.Format called with other than one int");
        Value v = at(a[0]);
        return make(std::move(v));
      }
      case Callable::FormatByName: {
        if (a.size() != 2 || at(a[0]).kind != Value::Kind::Global || at(a[0]).callable != Callable::NpuFormat ||
            at(a[1]).kind != Value::Kind::Str)
          refuse(op_at_, "getattr called on other than (torch_npu.npu._format.Format, a member name)");
        Value v;
        v.kind = Value::Kind::Int;  // the format's value does not matter here: the data is the CPU copy's
        return make(std::move(v));
      }
      case Callable::RebuildParameter: {
        if (a.size() != 3 || at(a[0]).kind != Value::Kind::Tensor)
          refuse(op_at_, "_rebuild_parameter called with other than (tensor, requires_grad, hooks)");
        Value v = at(a[0]);
        return make(std::move(v));
      }
      default:
        refuse(op_at_, "REDUCE calls a storage class or dtype (torch never calls those)");
    }
  }

  uint32_t execute() {
    pos_ = 0;
    while (true) {
      op_at_ = pos_;
      if (pos_ >= p_.size()) fail(p_.size(), "data.pkl ends before its STOP opcode (truncated pickle)");
      const uint8_t op = uint8_t(p_[pos_++]);
      switch (op) {
        case 0x80: {  // PROTO
          uint64_t v = le(1);
          if (v < 2 || v > 5) refuse(op_at_, fmt::format("pickle protocol {} (torch writes 2; 2-5 are read)", v));
          break;
        }
        case 0x95: le(8); break;  // FRAME: a hint only
        case '.': {               // STOP
          if (!marks_.empty()) fail(op_at_, "STOP inside an open MARK (malformed pickle)");
          if (stack_.empty()) fail(op_at_, "STOP with an empty stack (malformed pickle)");
          return stack_.back();
        }
        case '(': marks_.push_back(stack_.size()); break;  // MARK
        case '}': push(make(Value::Kind::Dict)); break;    // EMPTY_DICT
        case ']': push(make(Value::Kind::List)); break;    // EMPTY_LIST
        case ')': push(tuple({})); break;                  // EMPTY_TUPLE
        case 't': push(tuple(pop_mark())); break;          // TUPLE
        case 0x85: case 0x86: case 0x87: {                 // TUPLE1..3
          std::vector<uint32_t> items(op - 0x84);
          for (size_t i = items.size(); i-- > 0;) items[i] = pop();
          push(tuple(std::move(items)));
          break;
        }
        case 'a': { uint32_t v = pop(); add_to_list(top(), {v}); break; }  // APPEND
        case 'e': { auto items = pop_mark(); add_to_list(top(), items); break; }  // APPENDS
        case 's': { uint32_t v = pop(), k = pop(); add_to_dict(top(), {k, v}); break; }  // SETITEM
        case 'u': { auto kv = pop_mark(); add_to_dict(top(), kv); break; }  // SETITEMS
        case 'q': memo_put(le(1)); break;                   // BINPUT
        case 'r': memo_put(le(4)); break;                   // LONG_BINPUT
        case 0x94: memo_put(memo_.size()); break;           // MEMOIZE
        case 'h': memo_get(le(1)); break;                   // BINGET
        case 'j': memo_get(le(4)); break;                   // LONG_BINGET
        case 'N': push(make(Value::Kind::None)); break;
        case 0x88: case 0x89: {                             // NEWTRUE, NEWFALSE
          Value v;
          v.kind = Value::Kind::Bool;
          v.i = op == 0x88;
          push(make(std::move(v)));
          break;
        }
        case 'K': case 'M': case 'J': case 0x8a: {          // BININT1, BININT2, BININT, LONG1
          Value v;
          v.kind = Value::Kind::Int;
          if (op == 'K') v.i = int64_t(le(1));
          else if (op == 'M') v.i = int64_t(le(2));
          else if (op == 'J') v.i = int64_t(int32_t(uint32_t(le(4))));
          else {
            uint64_t n = le(1);
            if (n > 8) fail(op_at_, fmt::format("an integer of {} bytes (at most 8 are read)", n));
            uint64_t u = n ? le(int(n)) : 0;
            if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1) u |= ~uint64_t(0) << (8 * n);  // sign-extend
            v.i = int64_t(u);
          }
          push(make(std::move(v)));
          break;
        }
        case 'G': {                                         // BINFLOAT (big-endian)
          std::string_view b = bytes(8);
          uint64_t u = 0;
          for (char c : b) u = (u << 8) | uint8_t(c);
          Value v;
          v.kind = Value::Kind::Float;
          v.f = std::bit_cast<double>(u);
          push(make(std::move(v)));
          break;
        }
        case 'X': case 0x8c: {                              // BINUNICODE, SHORT_BINUNICODE
          Value v;
          v.kind = Value::Kind::Str;
          v.s = bytes(le(op == 'X' ? 4 : 1));
          push(make(std::move(v)));
          break;
        }
        case 'c': {                                         // GLOBAL "module\nname\n"
          std::string_view module = line();
          std::string_view name = line();
          push(global(module, name));
          break;
        }
        case 0x93: {                                        // STACK_GLOBAL
          uint32_t n = pop(), m = pop();
          if (at(n).kind != Value::Kind::Str || at(m).kind != Value::Kind::Str)
            refuse(op_at_, "STACK_GLOBAL on values that are not strings");
          push(global(at(m).s, at(n).s));
          break;
        }
        case 'R': {                                         // REDUCE
          uint32_t args = pop(), fn = pop();
          push(reduce(fn, args));
          break;
        }
        case 'Q': push(storage(pop())); break;              // BINPERSID
        default: {
          std::string_view known = kOpcodeNames.find(char(op)) != std::string_view::npos ? " (a pickle opcode torch "
                                                                                            "never writes for tensors)"
                                                                                          : "";
          refuse(op_at_, fmt::format("opcode 0x{:02x} ('{}'){}", op, shown(std::string_view(
                                                                          reinterpret_cast<const char*>(&op), 1)),
                                     known));
        }
      }
    }
  }

  // Opcodes of other pickles (BUILD, INST, OBJ, NEWOBJ, EXT*, BINBYTES, ...): named as such.
  static constexpr std::string_view kOpcodeNames = "bioI0LFSUVBCgp12PdlT\x81\x82\x83\x84\x8b\x8d\x8e\x8f\x90\x91\x92\x96\x97\x98";

  // The saved object's tensors with their places in it. Containers shared through the memo
  // are walked each time they are reached; the nesting and the number of visits are bounded
  // (a list holding itself, or 60 levels of [x, x], would otherwise never end).
  void walk(uint32_t v, const std::string& name, int depth, uint64_t& visits, TorchPickle& out) {
    if (++visits > kMaxPickleObjects)
      fail(p_.size(), fmt::format("the saved object reaches more than {} values through shared references",
                                  kMaxPickleObjects));
    if (depth > kMaxPickleDepth)
      fail(p_.size(), fmt::format("the saved object is nested deeper than {} levels (or contains itself)",
                                  kMaxPickleDepth));
    const Value& x = values_[v];
    auto child = [&](const std::string& key) {
      if (name.size() + key.size() + 1 > kMaxTensorNameBytes)
        fail(p_.size(), fmt::format("a name in the saved object is longer than {} bytes", kMaxTensorNameBytes));
      return name.empty() ? key : name + "." + key;
    };
    switch (x.kind) {
      case Value::Kind::Tensor: {
        names_bytes_ += name.size();
        if (out.tensors.size() >= kMaxPickledTensors || names_bytes_ > kMaxTensorNamesBytes)
          fail(p_.size(), fmt::format("the saved object reaches more than {} tensors or {} bytes of tensor names",
                                      kMaxPickledTensors, kMaxTensorNamesBytes));
        PickledTensor t = tensors_[size_t(x.i)];
        t.name = name;
        out.tensors.push_back(std::move(t));
        break;
      }
      case Value::Kind::Dict:
        for (size_t i = 0; i + 1 < x.items.size(); i += 2) {
          const Value& k = values_[x.items[i]];
          std::string key = k.kind == Value::Kind::Str   ? std::string(k.s)
                            : k.kind == Value::Kind::Int ? std::to_string(k.i)
                                                         : std::string("?");
          walk(x.items[i + 1], child(key), depth + 1, visits, out);
        }
        break;
      case Value::Kind::List: case Value::Kind::Tuple:
        for (size_t i = 0; i < x.items.size(); ++i) walk(x.items[i], child(std::to_string(i)), depth + 1, visits, out);
        break;
      default:
        ++out.other_values;
    }
  }

  std::string_view p_;
  const std::string& name_;
  uint64_t base_;
  size_t pos_ = 0;
  uint64_t op_at_ = 0;
  std::vector<Value> values_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::vector<uint32_t> memo_;
  std::vector<PickledTensor> tensors_;
  uint64_t pushes_ = 0, names_bytes_ = 0;
};

}  // namespace

TorchPickle read_torch_pickle(std::string_view data_pkl, const std::string& name, uint64_t base) {
  return Vm(data_pkl, name, base).run();
}

}  // namespace npud
