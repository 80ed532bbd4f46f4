// The reports of `npu-doctor env`: what is installed, and whether torch, torch_npu, CANN and
// the driver agree (docs/env.md).
#pragma once

#include <ostream>

#include "env/env_probe.hpp"

namespace npud {

void render_env_text(std::ostream& os, const EnvReport& r);
void render_env_json(std::ostream& os, const EnvReport& r);

}  // namespace npud
