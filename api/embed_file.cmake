# Writes OUT, a C file holding the bytes of IN as the NUL-terminated array
# NAME and its length (without the NUL) as NAME_len:
#   extern const char NAME[];  extern const size_t NAME_len;
# Run at build time: cmake -DIN=... -DOUT=... -DNAME=... -P embed_file.cmake
if(NOT IN OR NOT OUT OR NOT NAME)
  message(FATAL_ERROR "embed_file.cmake needs IN, OUT and NAME")
endif()
if(NOT NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
  message(FATAL_ERROR "embed_file.cmake: bad C name: ${NAME}")
endif()
file(SIZE ${IN} size)
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
get_filename_component(base ${IN} NAME)
set(body "/* Generated from ${base} by embed_file.cmake; do not edit. */\n")
string(APPEND body "#include <stddef.h>\n\n")
string(APPEND body "extern const char ${NAME}[];\nextern const size_t ${NAME}_len;\n\n")
string(APPEND body "const char ${NAME}[] = {${hex}0x00};\n")
string(APPEND body "const size_t ${NAME}_len = ${size};\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
