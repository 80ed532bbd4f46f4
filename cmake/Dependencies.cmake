# The third-party libraries every npud_<folder> library links, gathered in one INTERFACE target: npud_third_party.
#
# Default (`pip install .` from source, `cmake -B build`): the system's libraries (Debian 12:
# tools/deps.sh): simdjson, fmt, CLI11 and zlib, and isa-l's igzip when installed (it inflates
# .json.gz traces 2.5x as fast as zlib; NPUD_ISAL=OFF builds without it).
#
# NPUD_PORTABLE=ON (tools/build_wheel.sh, the wheel CI tests): a binary that needs nothing but
# glibc (2.34+) and libgcc_s at run time, so one wheel installs on any such Linux without -dev
# packages (docs/install.md):
#   - libstdc++ linked statically (top CMakeLists.txt, on the executable);
#   - fmt header-only; CLI11 is header-only anyway; zlib and tree-sitter from their static
#     archives (Debian's zlib1g-dev and libtree-sitter-dev ship them);
#   - simdjson compiled from the amalgamated simdjson.cpp of a pinned PyPI source archive
#     (Debian ships simdjson only as a shared library);
#   - isa-l (no static archive in Debian) loaded at run time with dlopen("libisal.so.2") when the
#     machine has it, zlib otherwise (src/ingest/isal_loader.cpp); `npu-doctor env` says which.
option(NPUD_PORTABLE "Link a binary that needs only glibc at run time (the portable wheel)" OFF)
option(NPUD_ISAL "Inflate gzip with isa-l when it is installed" ON)

find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
add_library(npud_third_party INTERFACE)
target_link_libraries(npud_third_party INTERFACE CLI11::CLI11 Threads::Threads)

if(NPUD_ISAL)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(ISAL QUIET IMPORTED_TARGET libisal)
  endif()
endif()

if(NPUD_PORTABLE)
  set(ZLIB_USE_STATIC_LIBS ON)
  find_package(ZLIB REQUIRED)
  include(${CMAKE_CURRENT_LIST_DIR}/SimdjsonSource.cmake)
  target_link_libraries(npud_third_party INTERFACE npud_simdjson fmt::fmt-header-only ZLIB::ZLIB)
  if(ISAL_FOUND)
    # The header only: its inflate_state layout is the ABI of the soname libisal.so.2.
    target_include_directories(npud_third_party INTERFACE ${ISAL_INCLUDE_DIRS})
    target_compile_definitions(npud_third_party INTERFACE NPUD_HAVE_ISAL NPUD_ISAL_DLOPEN)
    target_link_libraries(npud_third_party INTERFACE ${CMAKE_DL_LIBS})
    message(STATUS "npu-doctor: portable build; gzip inflated with isa-l where libisal.so.2 loads, zlib otherwise")
  else()
    message(STATUS "npu-doctor: portable build; gzip inflated with zlib (isa-l headers not found: apt install libisal-dev)")
  endif()
else()
  find_package(simdjson REQUIRED)
  find_package(ZLIB REQUIRED)
  target_link_libraries(npud_third_party INTERFACE simdjson::simdjson fmt::fmt ZLIB::ZLIB)
  if(ISAL_FOUND)
    target_link_libraries(npud_third_party INTERFACE PkgConfig::ISAL)
    target_compile_definitions(npud_third_party INTERFACE NPUD_HAVE_ISAL)
    message(STATUS "npu-doctor: gzip inflated with isa-l ${ISAL_VERSION}")
  else()
    message(STATUS "npu-doctor: gzip inflated with zlib (isa-l not found: apt install libisal-dev)")
  endif()
endif()
