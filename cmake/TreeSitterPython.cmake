# The Python grammar for `npu-doctor scan`.
#
# Runtime: Debian's libtree-sitter-dev (0.20.7: grammar ABI 13-14 only).
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

option(NPUD_SCAN "Build the static Python scan (needs libtree-sitter-dev and the grammar from PyPI)" ON)

set(NPUD_TSP_VERSION 0.23.6)
set(NPUD_TSP_FILE tree_sitter_python-0.23.6.tar.gz)
set(NPUD_TSP_URL "https://files.pythonhosted.org/packages/1c/30/6766433b31be476fda6569a3a374c2220e45ffee0bff75460038a57bf23b/${NPUD_TSP_FILE}")
set(NPUD_TSP_SHA256 354bfa0a2f9217431764a631516f85173e9711af2c13dbd796a8815acfe505d9)
set(NPUD_TS_FILE tree-sitter-0.23.2.tar.gz)
set(NPUD_TS_URL "https://files.pythonhosted.org/packages/0f/50/fd5fafa42b884f741b28d9e6fd366c3f34e15d2ed3aa9633b34e388379e2/${NPUD_TS_FILE}")
set(NPUD_TS_SHA256 66bae8dd47f1fed7bdef816115146d3a41c39b5c482d7bad36d9ba1def088450)

# The API -> aten op table the scan's API rules read; embedded whatever NPUD_SCAN says.
set(NPUD_API_MAP_CPP ${CMAKE_BINARY_DIR}/generated/api_aten_map.cpp)
npud_embed_files(${NPUD_API_MAP_CPP} embedded_api_aten_map ${CMAKE_SOURCE_DIR}/data/api-aten-map.tsv)
target_sources(npud_source PRIVATE ${NPUD_API_MAP_CPP})
set_source_files_properties(${NPUD_API_MAP_CPP} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)


# Sets <result_var> to a folder holding parser.c, scanner.c and tree_sitter/*.h, or to "".
function(npud_prepare_tree_sitter_python result_var)
  set(${result_var} "" PARENT_SCOPE)
  set(src ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${NPUD_TSP_VERSION})
  set(stamp "${NPUD_TSP_SHA256} ${NPUD_TS_SHA256}\n")
  if(EXISTS ${src}/verified)
    file(READ ${src}/verified done)
    if(done STREQUAL stamp)
      set(${result_var} ${src} PARENT_SCOPE)
      return()
    endif()
  endif()
  npud_fetch_pinned(${NPUD_TSP_FILE} ${NPUD_TSP_URL} ${NPUD_TSP_SHA256} grammar)
  npud_fetch_pinned(${NPUD_TS_FILE} ${NPUD_TS_URL} ${NPUD_TS_SHA256} library)
  if(NOT grammar OR NOT library)
    return()
  endif()
  file(REMOVE_RECURSE ${src})
  set(unpack ${CMAKE_BINARY_DIR}/_deps/unpack)
  file(REMOVE_RECURSE ${unpack})
  set(g tree_sitter_python-${NPUD_TSP_VERSION})
  file(ARCHIVE_EXTRACT INPUT ${grammar} DESTINATION ${unpack}
       PATTERNS ${g}/src/parser.c ${g}/src/scanner.c ${g}/LICENSE)
  set(h tree-sitter-0.23.2/tree_sitter/core/lib/src)
  file(ARCHIVE_EXTRACT INPUT ${library} DESTINATION ${unpack}
       PATTERNS ${h}/parser.h ${h}/array.h ${h}/alloc.h ${h}/ts_assert.h tree-sitter-0.23.2/LICENSE)
  file(MAKE_DIRECTORY ${src}/tree_sitter)
  file(COPY ${unpack}/${g}/src/parser.c ${unpack}/${g}/src/scanner.c DESTINATION ${src})
  file(COPY_FILE ${unpack}/${g}/LICENSE ${src}/LICENSE.tree-sitter-python)
  file(COPY ${unpack}/${h}/parser.h ${unpack}/${h}/array.h ${unpack}/${h}/alloc.h ${unpack}/${h}/ts_assert.h
       DESTINATION ${src}/tree_sitter)
  file(REMOVE_RECURSE ${unpack})
  # The Debian runtime loads grammars of ABI 13-14 only.
  file(STRINGS ${src}/parser.c abi_line REGEX "^#define LANGUAGE_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" abi "${abi_line}")
  if(NOT (abi EQUAL 13 OR abi EQUAL 14))
    message(WARNING "npu-doctor: tree-sitter-python ${NPUD_TSP_VERSION} has grammar ABI '${abi}', the runtime takes 13-14")
    return()
  endif()
  file(WRITE ${src}/verified "${stamp}")
  set(${result_var} ${src} PARENT_SCOPE)
endfunction()

if(NPUD_SCAN)
  find_path(NPUD_TREE_SITTER_INCLUDE tree_sitter/api.h)
  find_library(NPUD_TREE_SITTER_LIB NAMES libtree-sitter.a tree-sitter)
  if(NOT NPUD_TREE_SITTER_INCLUDE OR NOT NPUD_TREE_SITTER_LIB)
    message(WARNING "npu-doctor: tree-sitter runtime not found (apt install libtree-sitter-dev); building without `scan`")
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
      target_include_directories(npud_source PRIVATE ${NPUD_TREE_SITTER_INCLUDE})
      target_link_libraries(npud_source PUBLIC npud_tree_sitter_python ${NPUD_TREE_SITTER_LIB})
      target_compile_definitions(npud_source PUBLIC NPUD_HAVE_TREE_SITTER=1)
      message(STATUS "npu-doctor: scan enabled (tree-sitter-python ${NPUD_TSP_VERSION} from PyPI)")
    endif()
  endif()
else()
  message(STATUS "npu-doctor: scan disabled (NPUD_SCAN=OFF)")
endif()
