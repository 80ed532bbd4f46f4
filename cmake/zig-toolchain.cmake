# Cross toolchain for the release wheels (tools/release.sh): zig's clang from the pinned PyPI
# package `ziglang`, for a target such as aarch64-linux-gnu.2.28. zig brings its own glibc
# stubs for the glibc version the target names (so no symbol newer than 2.28 can be linked),
# its own libc++ (linked statically) and no system headers or libraries: a build with it proves
# that nothing of the build machine's -dev packages is used (cmake/BundledDeps.cmake supplies
# every library). One toolchain for x86_64 and aarch64.
#
# Env (tools/release.sh sets them; try_compile projects and the build itself inherit them):
#   NPUD_ZIG          the zig executable
#   NPUD_ZIG_TARGET   <arch>-linux-gnu.<glibc>, arch x86_64 or aarch64
if(NOT DEFINED ENV{NPUD_ZIG} OR NOT DEFINED ENV{NPUD_ZIG_TARGET})
  message(FATAL_ERROR "npu-doctor: cmake/zig-toolchain.cmake needs NPUD_ZIG (the zig executable) and "
          "NPUD_ZIG_TARGET (e.g. aarch64-linux-gnu.2.28) in the environment; tools/release.sh sets both")
endif()
string(REGEX MATCH "^[a-z0-9_]+" npud_zig_arch "$ENV{NPUD_ZIG_TARGET}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${npud_zig_arch})
set(CMAKE_C_COMPILER ${CMAKE_CURRENT_LIST_DIR}/zig/cc)
set(CMAKE_CXX_COMPILER ${CMAKE_CURRENT_LIST_DIR}/zig/c++)
set(CMAKE_AR ${CMAKE_CURRENT_LIST_DIR}/zig/ar CACHE FILEPATH "zig ar")
set(CMAKE_RANLIB ${CMAKE_CURRENT_LIST_DIR}/zig/ranlib CACHE FILEPATH "zig ranlib")
# Look for headers, libraries and packages in an empty root only: never the build machine's.
set(CMAKE_FIND_ROOT_PATH ${CMAKE_CURRENT_LIST_DIR}/zig/no-sysroot)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} ${CMAKE_CURRENT_LIST_DIR}/zig/no-sysroot)
