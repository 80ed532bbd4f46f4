// Which CUDA tests guard CUDA-only code. Library code runs a CUDA kernel (a custom extension,
// triton, apex, flash_attn, a torch.cuda-only API) behind `if x.is_cuda:`, `if
// torch.cuda.is_available():` or `x.device.type == "cuda"`, with a fallback for everything else.
// On an NPU that test is right as it is: the NPU takes the fallback. Rewriting it for the NPU
// (.is_npu, 'npu', torch.npu.is_available()) would send NPU tensors into the CUDA kernel. The
// CUDA rules note every fixable finding that sits in such a test; at finish() the ones whose
// test selects CUDA-only code keep their report but lose their edits. Internal to src/source.
#pragma once
#ifdef NPUD_HAVE_TREE_SITTER

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "source/rule_context.hpp"

namespace npud {

// torch.npu has torch.cuda.<member> with the same meaning (CUDA003 rewrites it).
bool npu_mirrors(std::string_view cuda_member);

class CudaGates {
 public:
  // Every node the CUDA rules see: functions and what they call, triton kernels, names bound
  // to CUDA-only code, and the uses of names that hold a test (`no_cuda = ...`).
  void visit(TSNode n, py::Kind k, FileScan& fs);
  // A fixable finding `f` just reported at node `at`.
  void note_test(TSNode at, const Finding& f, FileScan& fs);
  // Takes the edits off the findings whose test selects CUDA-only code (before CUDA006 counts
  // the fixes that bring NPU APIs into the file).
  void withhold(FileScan& fs);

  // A call in a branch, kept as text: whether it is CUDA-only may depend on what the file
  // defines further down.
  struct Callee {
    std::string shown;   // "self._xielu_cuda_fn"
    std::string base;    // its first name ("self", "RwkvLinearAttention", "_rms_kernel")
    std::string member;  // for self.m(...) / cls.m(...): "m"
    std::string cls;     // the class around the call
    int line = 0;
    bool strong = false;  // CUDA-only whatever the file defines (torch.cuda API, CUDA package)
    bool named = false;   // its name says CUDA (the file's own definition of it decides first)
    bool launch = false;  // kernel[grid](...)
  };

 private:
  struct FindingKey {
    std::string rule;
    int line = 0, column = 0;
  };
  // Where a test's value decides something.
  struct Site {
    enum Kind { None, Branch, Flag, Passed } kind = None;
    TSNode node{};      // Branch: if/elif/conditional/while; Passed: the call given the value
    int polarity = 1;   // -1: the test is negated (`not x.is_cuda`, `!= "cuda"`)
    std::string flag;   // Flag: the name the value is stored in
    std::vector<TSNode> also;  // operands evaluated only for CUDA: the `b` of `x.is_cuda and b`
  };
  struct Gate {
    FindingKey finding;
    std::vector<Callee> callees;  // calls in the branch the test selects for CUDA
    int fallback_line = 0;        // where the other branch starts (0: none)
    bool passed = false;          // the test's value is passed to a call, not branched on
  };
  struct Flag {
    int polarity = 1;
    std::vector<FindingKey> findings;
  };

  std::vector<Gate> gates_;
  LocalNames<Flag> flags_;
  LocalNames<std::string> bound_;            // names bound to CUDA-only code in a function
  LocalNames<bool> plain_;                   // names bound to anything else (cuda_devices = set())
  std::map<int, std::pair<std::string, std::string>> function_key_;  // scope id -> ("Class.method", "Class")
  // What a function of this file calls, kept small (a file may have millions of calls): whether
  // it calls CUDA-only code outright, and the callees the file may define (key -> named CUDA).
  struct Calls {
    bool strong = false;
    std::map<std::string, bool, std::less<>> keys;
    std::set<std::string, std::less<>> launches;
  };
  std::map<std::string, Calls, std::less<>> calls_;  // function key -> what it calls
  int calls_scope_ = -1;                              // the function calls_at_ is for
  Calls* calls_at_ = nullptr;
  std::map<std::string, std::vector<std::string>, std::less<>> methods_;  // class -> function keys
  std::set<std::string, std::less<>> defined_;  // function keys of this file
  std::set<std::string, std::less<>> triton_kernels_, loaded_globals_;
  int depth_ = 0;  // of cuda_named_ref()

  Site climb(TSNode from, int polarity, FileScan& fs) const;
  void gate(const Site& s, const std::vector<FindingKey>& findings, FileScan& fs);
  Callee callee_of(TSNode call, FileScan& fs, bool with_text = true) const;
  void record_call(TSNode call, FileScan& fs);
  static std::string key_of(const Callee& c);
  bool key_cuda_only(std::string_view key, bool named, const std::set<std::string, std::less<>>& fns) const;
  bool cuda_named_ref(TSNode e, FileScan& fs);
  void bind(TSNode assignment, FileScan& fs);
  void on_function(TSNode n, FileScan& fs);
  void on_flag_use(TSNode n, FileScan& fs);
  std::set<std::string, std::less<>> cuda_only_functions() const;
  bool cuda_only(const Callee& c, const std::set<std::string, std::less<>>& fns) const;
  static bool explain(Finding& f, const Gate& g, const Callee& hit);
};

}  // namespace npud

#endif  // NPUD_HAVE_TREE_SITTER
