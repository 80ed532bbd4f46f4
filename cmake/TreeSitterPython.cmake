# The Python grammar for `npu-doctor scan`.
#
# Runtime: the system's (Debian's libtree-sitter-dev 0.20.7) or, where there is none or
# NPUD_BUNDLED_DEPS=ON, the 0.23.2 runtime py-tree-sitter vendors (cmake/BundledDeps.cmake);
# both load grammar ABI 13-14 only.
# Grammar: the PyPI source distribution tree-sitter-python 0.23.6 (src/parser.c, src/scanner.c;
# 0.23.6 is the newest release with ABI 14, 0.25 is ABI 15). That sdist lacks the headers the
# generated parser includes (tree_sitter/parser.h, array.h, alloc.h): they are the tree-sitter
# library's own lib/src headers, which the tree-sitter CLI copies into every grammar, and they
# come from the PyPI sdist of the py-tree-sitter binding of the same release line (0.23.2, which
# vendors that library). Both archives are fetched from PyPI at configure time, checked
# against a pinned sha256, and kept in a download cache (NPUD_DEPS_CACHE, default
# ~/.cache/npu-doctor) so that the pip build, the check build and later builds fetch nothing.
# Nothing of them is committed, and nothing comes from npm.
#
# Offline builds: put both files in NPUD_DEPS_CACHE (or point it at a folder holding them).
# When the runtime or the grammar cannot be had, the build goes on without `scan`
# (NPUD_HAVE_TREE_SITTER undefined; the command says it was not built).
#
# Included from the top CMakeLists.txt after the libraries are defined (the scan is npud_source's); the archives come through
# npud_fetch_pinned (cmake/FetchPinned.cmake).

option(NPUD_SCAN "Build the static Python scan (the tree-sitter runtime and the grammar, from the system or PyPI)" ON)

set(NPUD_TSP_VERSION 0.23.6)
set(NPUD_TSP_FILE tree_sitter_python-0.23.6.tar.gz)
set(NPUD_TSP_URL "https://files.pythonhosted.org/packages/1c/30/6766433b31be476fda6569a3a374c2220e45ffee0bff75460038a57bf23b/${NPUD_TSP_FILE}")
set(NPUD_TSP_SHA256 354bfa0a2f9217431764a631516f85173e9711af2c13dbd796a8815acfe505d9)
# NPUD_TS_FILE/URL/SHA256 (py-tree-sitter 0.23.2): cmake/BundledDeps.cmake.

# The API -> aten op table the scan's API rules read; embedded whatever NPUD_SCAN says.
set(NPUD_API_MAP_CPP ${CMAKE_BINARY_DIR}/generated/api_aten_map.cpp)
npud_embed_files(${NPUD_API_MAP_CPP} embedded_api_aten_map ${CMAKE_SOURCE_DIR}/data/api-aten-map.tsv)
target_sources(npud_source PRIVATE ${NPUD_API_MAP_CPP})
set_source_files_properties(${NPUD_API_MAP_CPP} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)


# Sets <result_var> to a folder holding parser.c, scanner.c and tree_sitter/*.h, or to "".
function(npud_prepare_tree_sitter_python result_var)
  set(${result_var} "" PARENT_SCOPE)
  set(src ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${NPUD_TSP_VERSION})
  set(g tree_sitter_python-${NPUD_TSP_VERSION})
  npud_unpack_pinned(${src} ${NPUD_TSP_FILE} ${NPUD_TSP_URL} ${NPUD_TSP_SHA256} ${g}/src parser.c scanner.c)
  if(NOT NPUD_UNPACKED)
    return()
  endif()
  set(h tree-sitter-0.23.2/tree_sitter/core/lib/src)
  npud_unpack_pinned(${src}/tree_sitter ${NPUD_TS_FILE} ${NPUD_TS_URL} ${NPUD_TS_SHA256} ${h}
                     parser.h array.h alloc.h ts_assert.h)
  if(NOT NPUD_UNPACKED)
    return()
  endif()
  # The runtimes npu-doctor builds with (Debian's 0.20.7, the bundled 0.23.2) load grammar ABI 13-14.
  file(STRINGS ${src}/parser.c abi_line REGEX "^#define LANGUAGE_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" abi "${abi_line}")
  if(NOT (abi EQUAL 13 OR abi EQUAL 14))
    message(WARNING "npu-doctor: tree-sitter-python ${NPUD_TSP_VERSION} has grammar ABI '${abi}', the runtime takes 13-14")
    return()
  endif()
  set(${result_var} ${src} PARENT_SCOPE)
endfunction()

# Sets NPUD_TREE_SITTER_RUNTIME to the runtime library target or file to link, NPUD_TREE_SITTER_INCLUDE
# to its include folder (empty for a target), or NPUD_TREE_SITTER_RUNTIME to "" when there is none.
function(npud_find_tree_sitter_runtime)
  set(NPUD_TREE_SITTER_RUNTIME "" PARENT_SCOPE)
  if(NOT NPUD_BUNDLED_DEPS STREQUAL "ON")
    find_path(NPUD_TREE_SITTER_INCLUDE tree_sitter/api.h)
    find_library(NPUD_TREE_SITTER_LIB NAMES libtree-sitter.a tree-sitter)
    if(NPUD_TREE_SITTER_INCLUDE AND NPUD_TREE_SITTER_LIB)
      set(NPUD_TREE_SITTER_RUNTIME ${NPUD_TREE_SITTER_LIB} PARENT_SCOPE)
      set_property(GLOBAL APPEND PROPERTY NPUD_DEPS_USED "tree-sitter: system")
      return()
    endif()
    if(NPUD_BUNDLED_DEPS STREQUAL "OFF")
      message(WARNING "npu-doctor: tree-sitter runtime not found (Debian: apt install libtree-sitter-dev); building without `scan`")
      return()
    endif()
  endif()
  npud_bundled_tree_sitter()
  set(NPUD_TREE_SITTER_RUNTIME npud_tree_sitter PARENT_SCOPE)
  set(NPUD_TREE_SITTER_INCLUDE "" PARENT_SCOPE)
  set_property(GLOBAL APPEND PROPERTY NPUD_DEPS_USED "tree-sitter: pinned source")
endfunction()

if(NPUD_SCAN)
  npud_find_tree_sitter_runtime()
  if(NOT NPUD_TREE_SITTER_RUNTIME)
    # npud_find_tree_sitter_runtime said why.
  else()
    npud_prepare_tree_sitter_python(NPUD_TSP_SRC)
    if(NOT NPUD_TSP_SRC)
      message(WARNING "npu-doctor: tree-sitter-python grammar unavailable; building without `scan`")
    else()
      enable_language(C)
      add_library(npud_tree_sitter_python STATIC ${NPUD_TSP_SRC}/parser.c ${NPUD_TSP_SRC}/scanner.c)
      # Generated third-party code: no warnings, no debug info (parser.c is 130k lines). The
      # library's alloc.h routes allocation through the runtime's ts_current_* hooks, which
      # Debian's 0.20 runtime does not export: the scanner allocates with libc, as the grammar
      # template's own alloc.h does.
      target_compile_options(npud_tree_sitter_python PRIVATE -w -g0 -O2)
      target_compile_definitions(npud_tree_sitter_python PRIVATE
        ts_malloc=malloc ts_calloc=calloc ts_realloc=realloc ts_free=free)
      # The grammar's own headers come first: Debian's tree_sitter/parser.h is older.
      target_include_directories(npud_tree_sitter_python BEFORE PRIVATE ${NPUD_TSP_SRC})
      if(NPUD_TREE_SITTER_INCLUDE)
        target_include_directories(npud_source PRIVATE ${NPUD_TREE_SITTER_INCLUDE})
      endif()
      target_link_libraries(npud_source PUBLIC npud_tree_sitter_python ${NPUD_TREE_SITTER_RUNTIME})
      target_compile_definitions(npud_source PUBLIC NPUD_HAVE_TREE_SITTER=1)
      message(STATUS "npu-doctor: scan enabled (tree-sitter-python ${NPUD_TSP_VERSION} from PyPI)")
    endif()
  endif()
else()
  message(STATUS "npu-doctor: scan disabled (NPUD_SCAN=OFF)")
endif()
