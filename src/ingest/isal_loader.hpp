// isa-l's igzip inflate entry points, linked (system builds) or loaded at run time from
// libisal.so.2 (the portable build, NPUD_ISAL_DLOPEN: its binary needs only glibc, and uses
// isa-l where the machine has it). .gz readers take zlib when isal_api() is null.
#pragma once

#include <string>

#ifdef NPUD_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace npud {

#ifdef NPUD_HAVE_ISAL
struct IsalApi {
  void (*inflate_init)(inflate_state*);
  int (*inflate)(inflate_state*);
};
// The entry points, or null: a portable build on a machine without libisal.so.2, or
// NPUD_GZIP=zlib (the benchmark's baseline, and a way around an isa-l bug).
const IsalApi* isal_api();
#endif

// What inflates .gz inputs here, for `npu-doctor --version`: "isa-l", "isa-l (libisal.so.2,
// loaded at run time)" or "zlib".
std::string gzip_inflater_name();

}  // namespace npud
