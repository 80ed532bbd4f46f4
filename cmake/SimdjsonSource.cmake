# simdjson compiled from source (cmake/Dependencies.cmake; Debian ships it only as a shared
# library, other distributions not at all): the amalgamated simdjson.cpp/simdjson.h (simdjson
# 3.12.3, Apache-2.0) that the PyPI source distribution of pysimdjson 7.0.2 carries, pinned by
# sha256 and fetched through the download cache (cmake/FetchPinned.cmake). Defines the static
# library npud_simdjson.
set(NPUD_SIMDJSON_FILE pysimdjson-7.0.2.tar.gz)
set(NPUD_SIMDJSON_URL "https://files.pythonhosted.org/packages/9c/24/65e3cad88e74ef8ca59fefded953eb78ebface8a3199c3a97fe318a7387b/${NPUD_SIMDJSON_FILE}")
set(NPUD_SIMDJSON_SHA256 44cf276e48912a3b9c7ca362c14da8420a7ac15a9f1a16ec95becff86db3904a)

function(npud_bundled_simdjson)
  set(dest ${NPUD_BUNDLED_DIR}/simdjson-3.12.3)
  npud_unpack_pinned(${dest} ${NPUD_SIMDJSON_FILE} ${NPUD_SIMDJSON_URL} ${NPUD_SIMDJSON_SHA256}
                     pysimdjson-7.0.2 simdjson/simdjson.cpp simdjson/simdjson.h LICENSE)
  if(NOT NPUD_UNPACKED)
    npud_bundled_fail(simdjson)
  endif()
  add_library(npud_simdjson STATIC ${dest}/simdjson/simdjson.cpp)
  # Third-party code: no warnings, no debug info; its own runtime dispatch picks the SIMD kernels.
  target_compile_options(npud_simdjson PRIVATE -w -g0 -O3)
  # Before the system include folders: a machine may have Debian's older simdjson.h too.
  target_include_directories(npud_simdjson SYSTEM BEFORE PUBLIC ${dest}/simdjson)
  npud_bundled_license(${dest}/LICENSE pysimdjson.txt)
endfunction()
