# cmake -DINPUT=file -DOUTPUT=file.cpp -DNAMESPACE=ns -DSYMBOL=name -P EmbedText.cmake
# Writes a C++ source defining `const char* const ns::name` with the file's text, so data files such as
# the GPU catalog are compiled into the binary (no search path at run time, no file to lose).
file(READ "${INPUT}" content)
string(FIND "${content}" ")gpusage_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )gpusage_embed\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/EmbedText.cmake: do not edit.\n"
  "namespace ${NAMESPACE} {\nextern const char* const ${SYMBOL};\n"
  "const char* const ${SYMBOL} = R\"gpusage_embed(${content})gpusage_embed\";\n}\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
