# npud_embed_files(<out.cpp> <function> <file>...)
# Generates <out.cpp> defining `std::span<const npud::EmbeddedFile> <function>()` that
# returns each file's name (without directory) and bytes, so the binary carries its docs
# and data and needs nothing from the source tree at run time.
set(NPUD_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_files_script.cmake)

function(npud_embed_files out_cpp function)
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DFUNCTION=${function} "-DFILES=${ARGN}"
            -P ${NPUD_EMBED_SCRIPT}
    DEPENDS ${ARGN} ${NPUD_EMBED_SCRIPT}
    COMMENT "Embedding ${function}"
    VERBATIM)
  # Each generated file names its arrays kFile0...: alone in its translation unit.
  set_source_files_properties(${out_cpp} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
