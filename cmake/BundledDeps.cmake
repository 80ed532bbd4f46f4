# Third-party libraries built from pinned source, for machines without their -dev packages
# (openEuler, Kylin, a cross toolchain that sees no system headers) and for the portable wheels
# (cmake/Dependencies.cmake picks system or bundled per library).
#
# Every source comes from a PyPI source distribution that carries it, checked against a pinned
# sha256 and kept in the download cache (cmake/FetchPinned.cmake), so that a build needs only a
# C++20 compiler, CMake and the package index. The packages are only carriers: nothing of them
# but the listed files is used.
#   fmt 11.1.2 (MIT)            lightgbm 4.7.0's external_libs/fmt (headers; used header-only)
#   CLI11 2.5.0 (BSD-3-Clause)  highspy 1.16.0's extern/cli11/CLI11.hpp (the single header; HiGHS
#                               comments out App's default -h,--help: src/cli/main.cpp sets it)
#   zlib 1.3.1 (zlib)           blosc 1.11.4's c-blosc/internal-complibs/zlib-1.3.1 (npu-doctor
#                               inflates; the tests also deflate)
#   tree-sitter 0.23 (MIT)      the runtime library py-tree-sitter 0.23.2 vendors (the grammar's
#                               headers come from the same archive: cmake/TreeSitterPython.cmake)
#   isa-l 2.31 (BSD-3-Clause)   isal 1.9.1's src/isal/isa-l/include/igzip_lib.h, the header only:
#                               the portable binary loads libisal.so.2 at run time where the
#                               machine has it (its inflate_state is laid out as in Debian's
#                               2.30 header: the two differ in comments and spacing only)
#   simdjson 3.12.3 (Apache-2.0) pysimdjson 7.0.2's amalgamation (cmake/SimdjsonSource.cmake)
# Each library's license file is installed beside the binary's docs (share/npu-doctor/licenses).

set(NPUD_FMT_FILE lightgbm-4.7.0.tar.gz)
set(NPUD_FMT_URL "https://files.pythonhosted.org/packages/63/8e/4db5e29290d7e619c307fdb8dab0a0514090af2ce3ec483050e024ec6126/${NPUD_FMT_FILE}")
set(NPUD_FMT_SHA256 f8e20f682c9aabd000bcf4a7ed8aa6f473c1adfecccae34ec24e823d156f4af0)
set(NPUD_CLI11_FILE highspy-1.16.0.tar.gz)
set(NPUD_CLI11_URL "https://files.pythonhosted.org/packages/39/2a/900b9bd6663ffbc6be7c6f9adedda691734f7a392d4ed0d4b9c0d13beab3/${NPUD_CLI11_FILE}")
set(NPUD_CLI11_SHA256 83519368321b1ac0ed508b8562b335928b6fd249e2ab42ff0218491e1486d985)
set(NPUD_ZLIB_FILE blosc-1.11.4.tar.gz)
set(NPUD_ZLIB_URL "https://files.pythonhosted.org/packages/9e/66/3c0e1801d4674582c38f9b009e71c09eb501fc3db591e35436dac15fa7a7/${NPUD_ZLIB_FILE}")
set(NPUD_ZLIB_SHA256 e0b312d9554d3aea93c75af4ad70dfa8b815ef4fe2b658c313b2f27ed0f41d37)
# py-tree-sitter 0.23.2: also the source of the grammar's headers (TreeSitterPython.cmake).
set(NPUD_TS_FILE tree-sitter-0.23.2.tar.gz)
set(NPUD_TS_URL "https://files.pythonhosted.org/packages/0f/50/fd5fafa42b884f741b28d9e6fd366c3f34e15d2ed3aa9633b34e388379e2/${NPUD_TS_FILE}")
set(NPUD_TS_SHA256 66bae8dd47f1fed7bdef816115146d3a41c39b5c482d7bad36d9ba1def088450)

set(NPUD_ISAL_FILE isal-1.9.1.tar.gz)
set(NPUD_ISAL_URL "https://files.pythonhosted.org/packages/16/43/6cf9c6b2e80f02fb7bd809ab91496cc4bd1f9145bd3a5a312a91d76af8be/${NPUD_ISAL_FILE}")
set(NPUD_ISAL_SHA256 d210dca02a689ef2af709d2c62d2daac2e36b5d2fa06e6dc0d023c83fee77e91)

set(NPUD_BUNDLED_DIR ${CMAKE_BINARY_DIR}/_deps)

# Remembers a license file to install with the binary (top CMakeLists.txt installs the list).
function(npud_bundled_license file as)
  set_property(GLOBAL APPEND PROPERTY NPUD_THIRD_PARTY_LICENSES "${file}|${as}")
endfunction()

# Each npud_bundled_<lib>() defines the target npud_<lib>, or stops the configure with what is
# missing: a bundled library is asked for only when the system has none.
function(npud_bundled_fail what)
  message(FATAL_ERROR "npu-doctor: ${what} is not installed and its pinned source could not be fetched "
          "from PyPI (${NPUD_DEPS_CACHE}; put the archive there for an offline build)")
endfunction()

function(npud_bundled_fmt)
  set(dest ${NPUD_BUNDLED_DIR}/fmt-11.1.2)
  npud_unpack_pinned(${dest} ${NPUD_FMT_FILE} ${NPUD_FMT_URL} ${NPUD_FMT_SHA256}
                     lightgbm-4.7.0/external_libs/fmt include LICENSE)
  if(NOT NPUD_UNPACKED)
    npud_bundled_fail(fmt)
  endif()
  add_library(npud_fmt INTERFACE)
  target_include_directories(npud_fmt SYSTEM BEFORE INTERFACE ${dest}/include)
  target_compile_definitions(npud_fmt INTERFACE FMT_HEADER_ONLY=1)
  # fmt 11.1.2's format.h calls malloc/free without including <cstdlib> (fixed in 11.1.3); g++'s
  # libstdc++ happens to bring it in, zig's libc++ does not.
  target_compile_options(npud_fmt INTERFACE "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-include cstdlib>")
  npud_bundled_license(${dest}/LICENSE fmt.txt)
endfunction()

function(npud_bundled_cli11)
  set(dest ${NPUD_BUNDLED_DIR}/cli11-2.5.0)
  npud_unpack_pinned(${dest} ${NPUD_CLI11_FILE} ${NPUD_CLI11_URL} ${NPUD_CLI11_SHA256}
                     highspy-1.16.0 extern/cli11/CLI11.hpp)
  if(NOT NPUD_UNPACKED)
    npud_bundled_fail(CLI11)
  endif()
  # The single header carries its license at the top; sources include <CLI/CLI.hpp>.
  if(NOT EXISTS ${dest}/include/CLI/CLI.hpp)
    file(MAKE_DIRECTORY ${dest}/include/CLI)
    file(WRITE ${dest}/include/CLI/CLI.hpp "#pragma once\n#include \"${dest}/extern/cli11/CLI11.hpp\"\n")
  endif()
  add_library(npud_cli11 INTERFACE)
  target_include_directories(npud_cli11 SYSTEM BEFORE INTERFACE ${dest}/include)
  npud_bundled_license(${dest}/extern/cli11/CLI11.hpp CLI11.hpp)
endfunction()

function(npud_bundled_zlib)
  set(dest ${NPUD_BUNDLED_DIR}/zlib-1.3.1)
  set(sources adler32.c crc32.c deflate.c inffast.c inflate.c inftrees.c trees.c zutil.c)
  set(headers crc32.h deflate.h gzguts.h inffast.h inffixed.h inflate.h inftrees.h trees.h zconf.h zlib.h zutil.h)
  npud_unpack_pinned(${dest} ${NPUD_ZLIB_FILE} ${NPUD_ZLIB_URL} ${NPUD_ZLIB_SHA256}
                     blosc-1.11.4/blosc/c-blosc/internal-complibs/zlib-1.3.1 ${sources} ${headers})
  if(NOT NPUD_UNPACKED)
    npud_bundled_fail(zlib)
  endif()
  enable_language(C)
  list(TRANSFORM sources PREPEND ${dest}/)
  add_library(npud_zlib STATIC ${sources})
  set_target_properties(npud_zlib PROPERTIES UNITY_BUILD OFF)
  target_compile_options(npud_zlib PRIVATE -w -g0 -O2)
  target_include_directories(npud_zlib SYSTEM BEFORE PUBLIC ${dest})
  npud_bundled_license(${dest}/zlib.h zlib.h)   # zlib.h opens with the license
endfunction()

function(npud_bundled_tree_sitter)
  set(dest ${NPUD_BUNDLED_DIR}/tree-sitter-0.23.2)
  npud_unpack_pinned(${dest} ${NPUD_TS_FILE} ${NPUD_TS_URL} ${NPUD_TS_SHA256}
                     tree-sitter-0.23.2 tree_sitter/core/lib/src tree_sitter/core/lib/include LICENSE)
  if(NOT NPUD_UNPACKED)
    npud_bundled_fail(tree-sitter)
  endif()
  enable_language(C)
  # lib.c includes every other source of the runtime.
  set(lib ${dest}/tree_sitter/core/lib)
  add_library(npud_tree_sitter STATIC ${lib}/src/lib.c)
  set_target_properties(npud_tree_sitter PROPERTIES UNITY_BUILD OFF C_STANDARD 11)
  target_compile_options(npud_tree_sitter PRIVATE -w -g0 -O2)
  target_compile_definitions(npud_tree_sitter PRIVATE _POSIX_C_SOURCE=200112L _DEFAULT_SOURCE)
  target_include_directories(npud_tree_sitter PRIVATE ${lib}/src)
  target_include_directories(npud_tree_sitter SYSTEM PUBLIC ${lib}/include)
  npud_bundled_license(${dest}/LICENSE tree-sitter.txt)
endfunction()
# Sets NPUD_ISAL_HEADER_DIR to a folder holding isa-l/igzip_lib.h, or to "" (with a warning:
# isa-l is optional, zlib inflates instead).
function(npud_bundled_isal_header)
  set(NPUD_ISAL_HEADER_DIR "" PARENT_SCOPE)
  set(dest ${NPUD_BUNDLED_DIR}/isal-header-2.31)
  npud_unpack_pinned(${dest} ${NPUD_ISAL_FILE} ${NPUD_ISAL_URL} ${NPUD_ISAL_SHA256}
                     isal-1.9.1/src/isal/isa-l include/igzip_lib.h LICENSE)
  if(NOT NPUD_UNPACKED)
    message(WARNING "npu-doctor: isa-l's header could not be fetched: gzip will be inflated with zlib only")
    return()
  endif()
  if(NOT EXISTS ${dest}/isa-l/igzip_lib.h)
    file(MAKE_DIRECTORY ${dest}/isa-l)
    file(COPY_FILE ${dest}/include/igzip_lib.h ${dest}/isa-l/igzip_lib.h)
  endif()
  npud_bundled_license(${dest}/LICENSE isa-l.txt)
  set(NPUD_ISAL_HEADER_DIR ${dest} PARENT_SCOPE)
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/SimdjsonSource.cmake)
