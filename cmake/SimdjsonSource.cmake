# simdjson compiled from source for the portable build (cmake/Dependencies.cmake): the
# amalgamated simdjson.cpp/simdjson.h (simdjson 3.6.4, Apache-2.0) that the PyPI source
# distribution of pysimdjson 6.0.2 carries, pinned by sha256 and fetched through the download
# cache (cmake/FetchPinned.cmake). Defines the static library npud_simdjson.
set(NPUD_SIMDJSON_FILE pysimdjson-6.0.2.tar.gz)
set(NPUD_SIMDJSON_URL "https://files.pythonhosted.org/packages/88/a0/2ed02ea282713e84099a07b96e736062d93ac32d81cae482a9ceee39e9c1/${NPUD_SIMDJSON_FILE}")
set(NPUD_SIMDJSON_SHA256 ddbd6fecd42aa01c5c87d3c79b8ede1885b6763337d21745587a5392572c1f45)

set(npud_simdjson_src ${CMAKE_BINARY_DIR}/_deps/simdjson-3.6.4)
if(NOT EXISTS ${npud_simdjson_src}/verified)
  npud_fetch_pinned(${NPUD_SIMDJSON_FILE} ${NPUD_SIMDJSON_URL} ${NPUD_SIMDJSON_SHA256} archive)
  if(NOT archive)
    message(FATAL_ERROR "npu-doctor: NPUD_PORTABLE=ON needs ${NPUD_SIMDJSON_FILE} (PyPI) in NPUD_DEPS_CACHE=${NPUD_DEPS_CACHE}")
  endif()
  set(unpack ${CMAKE_BINARY_DIR}/_deps/unpack-simdjson)
  file(REMOVE_RECURSE ${unpack} ${npud_simdjson_src})
  file(ARCHIVE_EXTRACT INPUT ${archive} DESTINATION ${unpack}
       PATTERNS pysimdjson-6.0.2/simdjson/simdjson.cpp pysimdjson-6.0.2/simdjson/simdjson.h pysimdjson-6.0.2/LICENSE)
  file(MAKE_DIRECTORY ${npud_simdjson_src})
  file(COPY ${unpack}/pysimdjson-6.0.2/simdjson/simdjson.cpp ${unpack}/pysimdjson-6.0.2/simdjson/simdjson.h
       DESTINATION ${npud_simdjson_src})
  file(COPY_FILE ${unpack}/pysimdjson-6.0.2/LICENSE ${npud_simdjson_src}/LICENSE.pysimdjson)
  file(REMOVE_RECURSE ${unpack})
  file(WRITE ${npud_simdjson_src}/verified "${NPUD_SIMDJSON_SHA256}\n")
endif()

add_library(npud_simdjson STATIC ${npud_simdjson_src}/simdjson.cpp)
# Third-party code: no warnings, no debug info; its own runtime dispatch picks the SIMD kernels.
target_compile_options(npud_simdjson PRIVATE -w -g0 -O3)
# Before the system include folders: a machine may have Debian's older simdjson.h too.
target_include_directories(npud_simdjson SYSTEM BEFORE PUBLIC ${npud_simdjson_src})
