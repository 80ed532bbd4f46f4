# npud_embed_files(<out.cpp> <function> [RELATIVE_TO <dir>] <file>...)
# Generates <out.cpp> defining `std::span<const npud::EmbeddedFile> <function>()` that
# returns each file's name (without directory, or its path under RELATIVE_TO's dir) and
# bytes, so the binary carries its docs and data and needs nothing from the source tree at
# run time.
set(NPUD_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_files_script.cmake)

function(npud_embed_files out_cpp function)
  cmake_parse_arguments(PARSE_ARGV 2 EMBED "" "RELATIVE_TO" "")
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DFUNCTION=${function} "-DFILES=${EMBED_UNPARSED_ARGUMENTS}"
            "-DRELATIVE_TO=${EMBED_RELATIVE_TO}" -P ${NPUD_EMBED_SCRIPT}
    DEPENDS ${EMBED_UNPARSED_ARGUMENTS} ${NPUD_EMBED_SCRIPT}
    COMMENT "Embedding ${function}"
    VERBATIM)
  # Each generated file names its arrays kFile0...: alone in its translation unit.
  set_source_files_properties(${out_cpp} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
