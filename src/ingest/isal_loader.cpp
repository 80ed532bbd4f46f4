#include "ingest/isal_loader.hpp"

#include <cstdlib>
#include <string_view>

#ifdef NPUD_ISAL_DLOPEN
#include <dlfcn.h>
#endif

namespace npud {

#ifdef NPUD_HAVE_ISAL
namespace {

bool zlib_forced() {
  const char* force = std::getenv("NPUD_GZIP");
  return force && std::string_view(force) == "zlib";
}

#ifdef NPUD_ISAL_DLOPEN
// Loaded once and kept for the life of the process. The soname pins the ABI the header
// describes (inflate_state's layout); any other version is not looked for.
const IsalApi* loaded_api() {
  static const IsalApi* api = [] () -> const IsalApi* {
    void* lib = ::dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    static IsalApi found;
    found.inflate_init = reinterpret_cast<void (*)(inflate_state*)>(::dlsym(lib, "isal_inflate_init"));
    found.inflate = reinterpret_cast<int (*)(inflate_state*)>(::dlsym(lib, "isal_inflate"));
    return found.inflate_init && found.inflate ? &found : nullptr;
  }();
  return api;
}
#else
const IsalApi* loaded_api() {
  static const IsalApi linked{&isal_inflate_init, &isal_inflate};
  return &linked;
}
#endif

}  // namespace

const IsalApi* isal_api() { return zlib_forced() ? nullptr : loaded_api(); }
#endif

std::string gzip_inflater_name() {
#ifdef NPUD_HAVE_ISAL
  if (isal_api()) {
#ifdef NPUD_ISAL_DLOPEN
    return "isa-l (libisal.so.2, loaded at run time)";
#else
    return "isa-l";
#endif
  }
#endif
  return "zlib";
}

}  // namespace npud
