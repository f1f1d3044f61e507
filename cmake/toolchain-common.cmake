# Shared part of the cross toolchain files: clang compiles, ld.lld links directly
# (clang's driver would hand a bare-metal link to gcc).
find_program(TOLL_CLANG NAMES clang clang-14 REQUIRED)
find_program(TOLL_CLANGXX NAMES clang++ clang++-14 REQUIRED)
find_program(TOLL_LLD NAMES ld.lld ld.lld-14 REQUIRED)
find_program(TOLL_OBJCOPY NAMES llvm-objcopy llvm-objcopy-14 objcopy REQUIRED)
set(CMAKE_C_COMPILER ${TOLL_CLANG})
set(CMAKE_CXX_COMPILER ${TOLL_CLANGXX})
set(CMAKE_ASM_COMPILER ${TOLL_CLANG})
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
foreach(lang C CXX ASM)
  set(CMAKE_${lang}_LINK_EXECUTABLE "${TOLL_LLD} <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
endforeach()
execute_process(COMMAND ${TOLL_CLANG} -print-resource-dir OUTPUT_VARIABLE TOLL_CLANG_RESOURCE_DIR
                OUTPUT_STRIP_TRAILING_WHITESPACE)
