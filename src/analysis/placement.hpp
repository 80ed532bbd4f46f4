// Where a captured tensor will live once the program runs on an NPU. A capture made on a
// CPU sees every tensor on the host, but moving the program moves only some of them: the
// parameters (tensors that require grad), what `.to(device)` placed (`placement` events,
// docs/formats/capture.md), what factories make inside a module's forward (model code makes
// tensors on its inputs' device), and whatever ops compute from those. Batch indices drawn with
// torch.randint, NumPy-backed data before its `.to(device)`, DataLoader seeds and torch.optim's
// CPU step counters stay on the host: reading them waits for nothing on an NPU.
//
// A capture made on a device says so itself (a tensor's `device`); other traces have no
// tensor identities, and every tensor counts as on the device there.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.hpp"

namespace npud {

class Placement {
 public:
  explicit Placement(const Trace& trace);

  // True when every tensor input of ops[i] will be on the host after the move (it has at
  // least one); judged with what the ops before it computed (a storage the program later
  // fills from the device is not device data yet).
  bool host_only(uint32_t op) const { return op < host_only_.size() && host_only_[op]; }
  // A placement event (`.to(device)`) of tensors that are device data already: a no-op on an
  // NPU (the Trainer's _prepare_input after accelerate moved the batch).
  bool already_placed(uint32_t op) const { return op < already_placed_.size() && already_placed_[op]; }

 private:
  std::vector<uint8_t> host_only_;
  std::vector<uint8_t> already_placed_;
};

}  // namespace npud
