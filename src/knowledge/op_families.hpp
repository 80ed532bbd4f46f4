// Families of aten ops the core and the capture shim judge alike (data/facts/op-families.tsv,
// compiled in; the shim reads its generated copy, tools/gen_shim_data.py): ops with undefined
// output memory, ops that only copy values, ops that write a constant.
#pragma once

#include <string_view>

namespace npud {

enum class OpFamily { UndefinedOutput, ValueCopy, ValueFill };

// Whether an op's base name ("empty_like", "copy_": no "aten::", no overload) is in the family.
bool in_op_family(OpFamily family, std::string_view base);

}  // namespace npud
