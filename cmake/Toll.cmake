# Helper functions for the cross build: kernel objects and statically linked
# musl user programs, for whichever architecture TOLL_ARCH names.

if(TOLL_ARCH STREQUAL "i386")
  set(TOLL_KERNEL_TRIPLE i386-unknown-none-elf)
  set(TOLL_USER_TRIPLE i386-linux-musl)
  set(TOLL_KERNEL_ARCH_FLAGS -march=i686 -mno-sse -mno-mmx -mno-80387)
  set(TOLL_LLD_EMULATION elf_i386)
  set(TOLL_MUSL_DIR /usr/lib/i386-linux-musl)
  set(TOLL_MUSL_INCLUDE /usr/include/i386-linux-musl)
  set(TOLL_BUILTINS ${TOLL_CLANG_RESOURCE_DIR}/lib/linux/libclang_rt.builtins-i386.a)
  set(TOLL_USER_BUILTINS ${TOLL_BUILTINS})
elseif(TOLL_ARCH STREQUAL "arm64")
  set(TOLL_KERNEL_TRIPLE aarch64-unknown-none-elf)
  set(TOLL_USER_TRIPLE aarch64-linux-musl)
  # The first instructions run with the MMU off, where every access is
  # Device memory and unaligned accesses fault, so the compiler must not
  # emit any.
  set(TOLL_KERNEL_ARCH_FLAGS -mgeneral-regs-only -mstrict-align)
  # The translation granule, and so the page size (kernel/arch/physmem.h).
  set(TOLL_ARM64_GRANULE 4K CACHE STRING "arm64 translation granule: 4K or 16K")
  if(TOLL_ARM64_GRANULE STREQUAL "4K")
    list(APPEND TOLL_KERNEL_ARCH_FLAGS -DTOLL_PAGE_SHIFT=12)
  elseif(TOLL_ARM64_GRANULE STREQUAL "16K")
    list(APPEND TOLL_KERNEL_ARCH_FLAGS -DTOLL_PAGE_SHIFT=14)
  else()
    message(FATAL_ERROR "TOLL_ARM64_GRANULE must be 4K or 16K (got '${TOLL_ARM64_GRANULE}')")
  endif()
  set(TOLL_LLD_EMULATION aarch64elf)
  set(TOLL_MUSL_DIR /usr/lib/aarch64-linux-musl)
  set(TOLL_MUSL_INCLUDE /usr/include/aarch64-linux-musl)
  # clang ships no aarch64 builtins on Debian; libgcc from the cross package
  # provides the same helpers (long double arithmetic, among others).
  set(TOLL_BUILTINS /usr/lib/gcc-cross/aarch64-linux-gnu/12/libgcc.a)
  set(TOLL_USER_BUILTINS ${TOLL_BUILTINS})
else()
  message(FATAL_ERROR "TOLL_ARCH must be i386 or arm64 (got '${TOLL_ARCH}')")
endif()

# __FILE__ (in assertions and ktest failures) names files relative to the
# repository, so a checkout's path cannot change the kernel image: the same
# source gives the same instruction counts wherever it is built (the grader
# builds in scratch folders).
get_filename_component(TOLL_REPO_REAL ${CMAKE_CURRENT_LIST_DIR}/.. REALPATH)
get_filename_component(TOLL_BUILD_REAL ${CMAKE_BINARY_DIR} REALPATH)
file(RELATIVE_PATH TOLL_BUILD_RELATIVE ${TOLL_REPO_REAL} ${TOLL_BUILD_REAL})
set(TOLL_PATH_FLAGS -fmacro-prefix-map=${TOLL_REPO_REAL}/= -fdebug-prefix-map=${TOLL_REPO_REAL}/=
    -fdebug-compilation-dir=${TOLL_BUILD_RELATIVE})
# The debug information then names the build folder relative to the
# checkout (build/i386: -fdebug-compilation-dir, which the assembler's line
# table needs too) and, through cmake/relative-source, each source file
# relative to the build folder (../../src/...): gdb started at the top of
# the tree (tools/gdbinit) finds every file, and no absolute path is left in
# an image. ASM has no compiler-launcher property, so its rule takes the
# launcher directly.
set(TOLL_RELATIVE_SOURCE ${CMAKE_CURRENT_LIST_DIR}/relative-source)
foreach(lang C CXX)
  set(CMAKE_${lang}_COMPILER_LAUNCHER ${TOLL_RELATIVE_SOURCE} ${CMAKE_${lang}_COMPILER_LAUNCHER})
endforeach()
set(CMAKE_ASM_COMPILE_OBJECT
    "\"${TOLL_RELATIVE_SOURCE}\" <CMAKE_ASM_COMPILER> <DEFINES> <INCLUDES> <FLAGS> -o <OBJECT> -c <SOURCE>")

set(TOLL_COMMON_FLAGS ${TOLL_PATH_FLAGS} -ffreestanding -fno-exceptions -fno-rtti -fno-threadsafe-statics
    -nostdlib -fno-pic -fno-stack-protector -fno-delete-null-pointer-checks
    -fno-omit-frame-pointer -g -O2 -Wall -Wextra -Wno-unused-parameter)
# CI builds fail on any warning (the top-level option TOLL_WERROR).
if(TOLL_WERROR)
  list(APPEND TOLL_COMMON_FLAGS -Werror)
endif()

# toll_kernel_flags(<target>): compile <target> as freestanding kernel code.
function(toll_kernel_flags target)
  target_compile_options(${target} PRIVATE --target=${TOLL_KERNEL_TRIPLE}
    ${TOLL_COMMON_FLAGS} ${TOLL_KERNEL_ARCH_FLAGS}
    $<$<COMPILE_LANGUAGE:CXX>:-std=c++20 -nostdinc++>)
  target_include_directories(${target} PRIVATE ${TOLL_SOURCE_ROOT}
    ${TOLL_SOURCE_ROOT}/arch/${TOLL_ARCH}/include)
endfunction()

# TOLL_PREBUILT_INITRD: a ramdisk built before, from the same user programs
# (the grader passes its own, so that a submission whose files feed no user
# program does not build them all again); the kernel packs it instead of
# building one, and the user programs build only when asked for by name.
set(TOLL_PREBUILT_INITRD "" CACHE FILEPATH "an initial ramdisk to pack instead of building one")
if(TOLL_PREBUILT_INITRD)
  set(TOLL_USER_EXCLUDE EXCLUDE_FROM_ALL)
else()
  set(TOLL_USER_EXCLUDE)
endif()

# toll_user_program(<name> <sources...>): a static musl program for /bin.
function(toll_user_program name)
  add_executable(${name} ${TOLL_USER_EXCLUDE} ${ARGN})
  target_compile_options(${name} PRIVATE ${TOLL_PATH_FLAGS} --target=${TOLL_USER_TRIPLE} -static -nostdinc
    "SHELL:-isystem ${TOLL_CLANG_RESOURCE_DIR}/include" "SHELL:-isystem ${TOLL_MUSL_INCLUDE}"
    -fno-pic -fno-stack-protector -O2 -g -Wall -Wextra -Wno-unused-parameter
    $<$<BOOL:${TOLL_WERROR}>:-Werror>
    $<$<COMPILE_LANGUAGE:CXX>:-std=c++20 -fno-exceptions -fno-rtti -nostdinc++>)
  target_include_directories(${name} PRIVATE ${TOLL_SOURCE_ROOT}/user/include)
  target_link_options(${name} PRIVATE -m ${TOLL_LLD_EMULATION} -static --no-pie
    ${TOLL_MUSL_DIR}/crt1.o ${TOLL_MUSL_DIR}/crti.o)
  target_link_libraries(${name} PRIVATE ${TOLL_MUSL_DIR}/libc.a ${TOLL_USER_BUILTINS}
    ${TOLL_MUSL_DIR}/crtn.o)
  set_property(GLOBAL APPEND PROPERTY TOLL_USER_PROGRAMS ${name})
endfunction()

# toll_initrd_file(<source> <path>): also packs the generated file <source>
# (the OUTPUT of a custom command) into the ramdisk at <path>.
function(toll_initrd_file source path)
  set_property(GLOBAL APPEND PROPERTY TOLL_INITRD_FILES "${source}=${path}")
  set_property(GLOBAL APPEND PROPERTY TOLL_INITRD_SOURCES ${source})
endfunction()

# toll_kernel_image(<target> LDSCRIPT <file> INITRD_ASM <file> SOURCES <files...>):
# links a kernel from the architecture's sources, the core and the library,
# and packs every user program (TOLL_USER_PROGRAMS) into the initial ramdisk
# that INITRD_ASM pulls in with .incbin TOLL_INITRD_PATH.
function(toll_kernel_image target)
  cmake_parse_arguments(K "" "LDSCRIPT;INITRD_ASM" "SOURCES" ${ARGN})
  add_executable(${target} ${K_SOURCES} $<TARGET_OBJECTS:toll_core> $<TARGET_OBJECTS:toll_klib>)
  toll_kernel_flags(${target})
  target_link_options(${target} PRIVATE -m ${TOLL_LLD_EMULATION} -T ${K_LDSCRIPT} -nostdlib -static)
  target_link_libraries(${target} PRIVATE ${TOLL_BUILTINS})
  set_target_properties(${target} PROPERTIES LINK_DEPENDS ${K_LDSCRIPT})

  get_property(programs GLOBAL PROPERTY TOLL_USER_PROGRAMS)
  # Files that are not programs built here (toll_initrd_file): SRC=/PATH entries.
  get_property(extra_files GLOBAL PROPERTY TOLL_INITRD_FILES)
  get_property(extra_sources GLOBAL PROPERTY TOLL_INITRD_SOURCES)
  set(initrd ${CMAKE_CURRENT_BINARY_DIR}/initrd.cpio)
  set(files)
  foreach(prog ${programs})
    list(APPEND files $<TARGET_FILE:${prog}>)
  endforeach()
  if(TOLL_PREBUILT_INITRD)
    set(initrd ${TOLL_PREBUILT_INITRD})
  else()
    add_custom_command(OUTPUT ${initrd}
      COMMAND /usr/bin/python3 ${TOLL_REPO_ROOT}/tools/mkinitrd ${initrd} ${files} ${extra_files}
      DEPENDS ${programs} ${extra_sources} ${TOLL_REPO_ROOT}/tools/mkinitrd
      COMMENT "Packing the ${TOLL_ARCH} initial ramdisk")
  endif()
  set_source_files_properties(${K_INITRD_ASM} PROPERTIES
    OBJECT_DEPENDS ${initrd} COMPILE_DEFINITIONS TOLL_INITRD_PATH="${initrd}")
endfunction()
