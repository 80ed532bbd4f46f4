# The third-party libraries every npud_<folder> library links, gathered in one INTERFACE target: npud_third_party.
#
# CLI11, fmt, zlib and simdjson (and the tree-sitter runtime, cmake/TreeSitterPython.cmake):
# NPUD_BUNDLED_DEPS=AUTO (default; `pip install .`, `cmake -B build`) takes each from the system
# when its -dev package is installed (Debian 12: tools/deps.sh) and builds it from pinned source
# fetched from PyPI otherwise (cmake/BundledDeps.cmake), so a build needs only a C++20 compiler,
# CMake and the package index (openEuler, Kylin). isa-l's igzip is optional: used when its
# headers are installed (it inflates .json.gz traces 2.5x as fast as zlib; NPUD_ISAL=OFF
# builds without it).
#
# NPUD_PORTABLE=ON (tools/release.sh's manylinux_2_28 wheels, cmake/zig-toolchain.cmake): every
# library from pinned source, and a binary that needs nothing but glibc at run time, so one
# wheel installs on any glibc 2.28+ Linux without -dev packages (docs/install.md). The C++
# runtime is linked statically (zig's libc++, or -static-libstdc++ with g++: top CMakeLists.txt);
# isa-l, where its headers are found, is loaded at run time with dlopen("libisal.so.2"), zlib
# otherwise (src/ingest/isal_loader.cpp); `npu-doctor env` says which.
option(NPUD_PORTABLE "Link a binary that needs only glibc at run time (the portable wheel)" OFF)
option(NPUD_ISAL "Inflate gzip with isa-l when it is installed" ON)

set(NPUD_BUNDLED_DEPS AUTO CACHE STRING
    "Third-party libraries: AUTO (the system's when installed, else built from pinned source), ON (always pinned source), OFF (the system's only)")
set_property(CACHE NPUD_BUNDLED_DEPS PROPERTY STRINGS AUTO ON OFF)
if(NPUD_PORTABLE)
  # The wheels build the same sources on every build machine (cmake/BundledDeps.cmake).
  set(NPUD_BUNDLED_DEPS ON)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/BundledDeps.cmake)

# npud_use_dep(<name> <package> <system target> <bundled function> <debian package>): links the
# system's <system target> (find_package(<package>)) or the bundled library, as
# NPUD_BUNDLED_DEPS says, into npud_third_party, and records which in NPUD_DEPS_USED.
function(npud_use_dep name package system_target bundled debian)
  if(NOT NPUD_BUNDLED_DEPS STREQUAL "ON")
    find_package(${package} QUIET)
    if(TARGET ${system_target})
      target_link_libraries(npud_third_party INTERFACE ${system_target})
      set_property(GLOBAL APPEND PROPERTY NPUD_DEPS_USED "${name}: system")
      return()
    endif()
    if(NPUD_BUNDLED_DEPS STREQUAL "OFF")
      message(FATAL_ERROR "npu-doctor: ${name} not found (Debian: apt install ${debian}); "
              "NPUD_BUNDLED_DEPS=AUTO builds it from pinned source instead")
    endif()
  endif()
  cmake_language(CALL ${bundled})
  string(TOLOWER ${name} lower)
  target_link_libraries(npud_third_party INTERFACE npud_${lower})
  set_property(GLOBAL APPEND PROPERTY NPUD_DEPS_USED "${name}: pinned source")
endfunction()

find_package(Threads REQUIRED)
add_library(npud_third_party INTERFACE)
target_link_libraries(npud_third_party INTERFACE Threads::Threads)
npud_use_dep(CLI11 CLI11 CLI11::CLI11 npud_bundled_cli11 libcli11-dev)
npud_use_dep(fmt fmt fmt::fmt npud_bundled_fmt libfmt-dev)
npud_use_dep(zlib ZLIB ZLIB::ZLIB npud_bundled_zlib zlib1g-dev)
npud_use_dep(simdjson simdjson simdjson::simdjson npud_bundled_simdjson libsimdjson-dev)

if(NPUD_ISAL AND NPUD_PORTABLE)
  # The header only, from pinned source: libisal.so.2 is loaded at run time where it exists.
  npud_bundled_isal_header()
  if(NPUD_ISAL_HEADER_DIR)
    target_include_directories(npud_third_party SYSTEM INTERFACE ${NPUD_ISAL_HEADER_DIR})
    target_compile_definitions(npud_third_party INTERFACE NPUD_HAVE_ISAL NPUD_ISAL_DLOPEN)
    target_link_libraries(npud_third_party INTERFACE ${CMAKE_DL_LIBS})
    message(STATUS "npu-doctor: portable build; gzip inflated with isa-l where libisal.so.2 loads, zlib otherwise")
  endif()
elseif(NPUD_ISAL)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(ISAL QUIET IMPORTED_TARGET libisal)
  endif()
  if(ISAL_FOUND)
    target_link_libraries(npud_third_party INTERFACE PkgConfig::ISAL)
    target_compile_definitions(npud_third_party INTERFACE NPUD_HAVE_ISAL)
    message(STATUS "npu-doctor: gzip inflated with isa-l ${ISAL_VERSION}")
  else()
    message(STATUS "npu-doctor: gzip inflated with zlib (isa-l not found: optional, Debian: apt install libisal-dev)")
  endif()
endif()
