# gpusage_embed_text(TARGET target INPUT file NAMESPACE ns SYMBOL name): compile a text file into target.
function(gpusage_embed_text)
  cmake_parse_arguments(E "" "TARGET;INPUT;NAMESPACE;SYMBOL" "" ${ARGN})
  get_filename_component(input "${E_INPUT}" ABSOLUTE)
  set(output "${CMAKE_BINARY_DIR}/generated/embed/${E_SYMBOL}.cpp")
  add_custom_command(OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output} -DNAMESPACE=${E_NAMESPACE}
            -DSYMBOL=${E_SYMBOL} -P ${CMAKE_SOURCE_DIR}/cmake/EmbedText.cmake
    DEPENDS "${input}" ${CMAKE_SOURCE_DIR}/cmake/EmbedText.cmake
    COMMENT "Embedding ${E_INPUT}")
  target_sources(${E_TARGET} PRIVATE "${output}")
endfunction()
