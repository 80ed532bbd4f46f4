# Pinned source archives from PyPI, fetched at configure time into a download cache.
#
# The build takes a few third-party sources from PyPI source distributions (the Python
# grammar for `scan`; simdjson for the portable build), each checked against a pinned sha256
# and kept in NPUD_DEPS_CACHE (default ~/.cache/npu-doctor), so that the pip build, the check
# build and later builds fetch nothing. Nothing of them is committed, and nothing comes from npm.
# Offline builds: put the files in NPUD_DEPS_CACHE (or point it at a folder holding them).

if(DEFINED ENV{XDG_CACHE_HOME})
  set(npud_default_cache "$ENV{XDG_CACHE_HOME}/npu-doctor")
elseif(DEFINED ENV{HOME})
  set(npud_default_cache "$ENV{HOME}/.cache/npu-doctor")
else()
  set(npud_default_cache "${CMAKE_BINARY_DIR}/_deps/cache")
endif()
set(NPUD_DEPS_CACHE "${npud_default_cache}" CACHE PATH
    "Folder holding (or receiving) the pinned PyPI source archives the build uses")

# Sets <result_var> to the path of <file> in the cache, fetched from <url> when absent, or to ""
# (with a warning) when it cannot be had with the expected sha256.
function(npud_fetch_pinned file url sha256 result_var)
  set(${result_var} "" PARENT_SCOPE)
  set(path ${NPUD_DEPS_CACHE}/${file})
  if(EXISTS ${path})
    file(SHA256 ${path} sha)
    if(sha STREQUAL sha256)
      set(${result_var} ${path} PARENT_SCOPE)
      return()
    endif()
    message(WARNING "npu-doctor: ${path} has sha256 ${sha}, expected ${sha256}; fetching it again")
  endif()
  file(MAKE_DIRECTORY ${NPUD_DEPS_CACHE})
  message(STATUS "npu-doctor: fetching ${file} from PyPI")
  # A unique temporary name: two builds filling the same cache at once never see half a file.
  string(RANDOM LENGTH 12 tag)
  set(tmp ${path}.${tag}.part)
  file(DOWNLOAD ${url} ${tmp} EXPECTED_HASH SHA256=${sha256} TIMEOUT 300 STATUS status TLS_VERIFY ON)
  list(GET status 0 rc)
  if(NOT rc EQUAL 0)
    list(GET status 1 why)
    file(REMOVE ${tmp})
    message(WARNING "npu-doctor: could not fetch ${url}: ${why}")
    return()
  endif()
  file(RENAME ${tmp} ${path})
  set(${result_var} ${path} PARENT_SCOPE)
endfunction()

# npud_unpack_pinned(<dest> <file> <url> <sha256> <prefix> <member>...): the members (files or
# folders, paths below <prefix> inside the archive) of a pinned archive, copied into <dest>
# under the same relative paths. Sets NPUD_UNPACKED to TRUE when <dest> holds them, FALSE when
# the archive cannot be had (npud_fetch_pinned warned). A stamp naming the sha256 and the
# members makes later configures reuse <dest> without touching the archive.
function(npud_unpack_pinned dest file url sha256 prefix)
  set(members ${ARGN})
  set(stamp "${sha256} ${members}\n")
  set(NPUD_UNPACKED TRUE PARENT_SCOPE)
  if(EXISTS ${dest}/verified)
    file(READ ${dest}/verified done)
    if(done STREQUAL stamp)
      return()
    endif()
  endif()
  npud_fetch_pinned(${file} ${url} ${sha256} archive)
  if(NOT archive)
    set(NPUD_UNPACKED FALSE PARENT_SCOPE)
    return()
  endif()
  string(RANDOM LENGTH 8 tag)
  set(unpack ${dest}.unpack-${tag})
  list(TRANSFORM members PREPEND "${prefix}/" OUTPUT_VARIABLE patterns)
  file(ARCHIVE_EXTRACT INPUT ${archive} DESTINATION ${unpack} PATTERNS ${patterns})
  file(REMOVE_RECURSE ${dest})
  foreach(member ${members})
    if(NOT EXISTS ${unpack}/${prefix}/${member})
      file(REMOVE_RECURSE ${unpack})
      message(FATAL_ERROR "npu-doctor: ${file} has no ${prefix}/${member}")
    endif()
    get_filename_component(parent ${dest}/${member} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(RENAME ${unpack}/${prefix}/${member} ${dest}/${member})
  endforeach()
  file(REMOVE_RECURSE ${unpack})
  file(WRITE ${dest}/verified "${stamp}")
endfunction()
