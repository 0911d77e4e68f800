# Usage: cmake -DIN=file -DOUT=out.c -DSYM=name -P embed.cmake
# Writes `const unsigned char SYM[]` (NUL-terminated) and `const size_t SYM_len`.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "#include <stddef.h>\nconst unsigned char ${SYM}[] = {${body}0x00};\nconst size_t ${SYM}_len = ${len};\n")
