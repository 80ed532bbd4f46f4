# The Python grammar for `npu-doctor scan`.
#
# Runtime: Debian's libtree-sitter-dev (0.20.7: grammar ABI 13-14 only).
# Grammar: the npm package tree-sitter-python, fetched into the build dir at configure time
# (`npm pack`), checked against a pinned sha256, and compiled here as a small C library.
# Nothing of it is committed. 0.23.6 is the newest release with ABI 14 (0.25 is ABI 15).
#
# Offline builds: -DNPUD_TREE_SITTER_PYTHON_TGZ=/path/to/tree-sitter-python-0.23.6.tgz.
# When the runtime or the grammar cannot be had, the build goes on without `scan`
# (NPUD_HAVE_TREE_SITTER undefined; the command says it was not built).
#
# Included from the top CMakeLists.txt after npud_core is defined.

option(NPUD_SCAN "Build the static Python scan (needs libtree-sitter-dev and npm)" ON)

set(NPUD_TSP_VERSION 0.23.6)
set(NPUD_TSP_SHA256 aab5b860d93dbf84b37fed532f7dacc0468ede5387d0c74911d68f964287662a)
set(NPUD_TREE_SITTER_PYTHON_TGZ "" CACHE FILEPATH
    "Local tree-sitter-python-${NPUD_TSP_VERSION}.tgz (skips npm)")

# The API -> aten op table the scan's API rules read; embedded whatever NPUD_SCAN says.
set(NPUD_API_MAP_CPP ${CMAKE_BINARY_DIR}/generated/api_aten_map.cpp)
npud_embed_files(${NPUD_API_MAP_CPP} embedded_api_aten_map ${CMAKE_SOURCE_DIR}/data/api-aten-map.tsv)
target_sources(npud_core PRIVATE ${NPUD_API_MAP_CPP})

function(npud_fetch_tree_sitter_python out_dir result_var)
  set(${result_var} "" PARENT_SCOPE)
  set(root ${CMAKE_BINARY_DIR}/_deps/tree-sitter-python-${NPUD_TSP_VERSION})
  set(src ${root}/package/src)
  if(EXISTS ${src}/parser.c AND EXISTS ${root}/verified)
    set(${result_var} ${src} PARENT_SCOPE)
    return()
  endif()
  file(MAKE_DIRECTORY ${root})
  set(tgz ${NPUD_TREE_SITTER_PYTHON_TGZ})
  if(NOT tgz)
    find_program(NPUD_NPM npm)
    if(NOT NPUD_NPM)
      message(WARNING "npu-doctor: npm not found; cannot fetch tree-sitter-python")
      return()
    endif()
    message(STATUS "npu-doctor: fetching tree-sitter-python@${NPUD_TSP_VERSION} with npm pack")
    execute_process(
      COMMAND ${NPUD_NPM} pack tree-sitter-python@${NPUD_TSP_VERSION} --silent
      WORKING_DIRECTORY ${root}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
      TIMEOUT 300)
    if(NOT rc EQUAL 0)
      message(WARNING "npu-doctor: npm pack tree-sitter-python@${NPUD_TSP_VERSION} failed: ${err}")
      return()
    endif()
    set(tgz ${root}/tree-sitter-python-${NPUD_TSP_VERSION}.tgz)
  endif()
  if(NOT EXISTS ${tgz})
    message(WARNING "npu-doctor: ${tgz} does not exist")
    return()
  endif()
  file(SHA256 ${tgz} sha)
  if(NOT sha STREQUAL NPUD_TSP_SHA256)
    message(WARNING "npu-doctor: ${tgz} has sha256 ${sha}, expected ${NPUD_TSP_SHA256}; not using it")
    return()
  endif()
  file(ARCHIVE_EXTRACT INPUT ${tgz} DESTINATION ${root}
       PATTERNS package/src/parser.c package/src/scanner.c package/src/tree_sitter package/LICENSE)
  # The Debian runtime loads grammars of ABI 13-14 only.
  file(STRINGS ${src}/parser.c abi_line REGEX "^#define LANGUAGE_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" abi "${abi_line}")
  if(NOT (abi EQUAL 13 OR abi EQUAL 14))
    message(WARNING "npu-doctor: tree-sitter-python ${NPUD_TSP_VERSION} has grammar ABI '${abi}', the runtime takes 13-14")
    return()
  endif()
  file(WRITE ${root}/verified "${sha}\n")
  set(${result_var} ${src} PARENT_SCOPE)
endfunction()

if(NPUD_SCAN)
  find_path(NPUD_TREE_SITTER_INCLUDE tree_sitter/api.h)
  find_library(NPUD_TREE_SITTER_LIB NAMES libtree-sitter.a tree-sitter)
  if(NOT NPUD_TREE_SITTER_INCLUDE OR NOT NPUD_TREE_SITTER_LIB)
    message(WARNING "npu-doctor: tree-sitter runtime not found (apt install libtree-sitter-dev); building without `scan`")
  else()
    npud_fetch_tree_sitter_python(dummy NPUD_TSP_SRC)
    if(NOT NPUD_TSP_SRC)
      message(WARNING "npu-doctor: tree-sitter-python grammar unavailable; building without `scan`")
    else()
      enable_language(C)
      add_library(npud_tree_sitter_python STATIC ${NPUD_TSP_SRC}/parser.c ${NPUD_TSP_SRC}/scanner.c)
      # Generated third-party code: no warnings, no debug info (parser.c is 130k lines).
      target_compile_options(npud_tree_sitter_python PRIVATE -w -g0 -O2)
      target_include_directories(npud_tree_sitter_python PRIVATE ${NPUD_TSP_SRC})
      target_include_directories(npud_core PRIVATE ${NPUD_TREE_SITTER_INCLUDE})
      target_link_libraries(npud_core PUBLIC npud_tree_sitter_python ${NPUD_TREE_SITTER_LIB})
      target_compile_definitions(npud_core PUBLIC NPUD_HAVE_TREE_SITTER=1)
      message(STATUS "npu-doctor: scan enabled (tree-sitter-python ${NPUD_TSP_VERSION})")
    endif()
  endif()
else()
  message(STATUS "npu-doctor: scan disabled (NPUD_SCAN=OFF)")
endif()
