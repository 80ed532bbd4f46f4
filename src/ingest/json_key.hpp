// The key of an On Demand object field, unescaped, on every simdjson the build may use:
// Debian 12's 3.0 (system builds) takes no argument; the 3.6 the portable build compiles
// (cmake/SimdjsonSource.cmake) takes allow_replacement, false keeping 3.0's behaviour (an
// invalid escape in a key is an error).
#pragma once

namespace npud {

template <typename Field>
auto unescaped_key(Field& field) {
  if constexpr (requires { field.unescaped_key(); })
    return field.unescaped_key();
  else
    return field.unescaped_key(false);
}

}  // namespace npud
