// Part of the portable binary only (NPUD_PORTABLE, cmake/Dependencies.cmake): keeps the glibc it
// needs at 2.34, so the manylinux wheel installs on Ubuntu 22.04 (2.35) and openEuler 22.03
// (2.34), not only where the build machine's 2.36 is.
//
// Debian 12's static libstdc++ refers to arc4random (glibc 2.36) from std::random_device,
// which npu-doctor never uses; the reference comes along with objects it does use. A
// definition in the executable binds that reference here instead of to glibc's symbol.
// getrandom is glibc 2.25.
#include <sys/random.h>

#include <cstdint>
#include <cstdlib>

extern "C" uint32_t arc4random(void) {
  uint32_t v = 0;
  char* p = reinterpret_cast<char*>(&v);
  size_t got = 0;
  while (got < sizeof v) {
    ssize_t k = ::getrandom(p + got, sizeof v - got, 0);
    if (k < 0) std::abort();   // glibc's arc4random aborts too when the kernel gives no entropy
    got += size_t(k);
  }
  return v;
}
