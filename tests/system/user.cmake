# User-level tests on i386: each test program runs alone (run=) and must exit
# 0; a failed check, a fault or a program that cannot start fails the test.
file(GLOB TOLL_I386_USER_TESTS RELATIVE ${CMAKE_SOURCE_DIR}/src/user/tests
     ${CMAKE_SOURCE_DIR}/src/user/tests/ut_*.c)
# Every test program under every address-space layout (vm.split=).
foreach(split 3/1 3/1-pti 4/4)
  string(REPLACE "/" "_" tag ${split})
  foreach(src ${TOLL_I386_USER_TESTS})
    get_filename_component(prog ${src} NAME_WE)
    # Exhausting memory is slow and layout-blind: once, under the default.
    if(prog STREQUAL "ut_exhaust" AND NOT split STREQUAL "4/4")
      continue()
    endif()
    set(run "vm.split=${split} run=/bin/${prog}")
    # ut_cow also checks a copy-on-write copy that memory is too short for:
    # it steers the fault injector, which must be armed at boot.
    if(prog STREQUAL "ut_cow")
      set(run "fail.alloc=0 ${run} short")
    endif()
    toll_system_test(i386.qemu.${tag}.user.${prog} --arch i386 --cmdline "${run}" --timeout 60)
  endforeach()
endforeach()

# The loaderless path runs user programs too (under QEMU and Bochs).
toll_system_test(i386.qemu.disk.user.ut_forkexec --arch i386 --boot disk --cmdline "run=/bin/ut_forkexec")
toll_system_test(i386.bochs.disk.user.ut_hello --arch i386 --emu bochs --boot disk --cmdline "run=/bin/ut_hello")
# The attacks under Bochs too, where a ring-3 iret cannot enter vm86 mode
# (QEMU lets it): every check holds on both emulators.
toll_system_test(i386.bochs.disk.user.ut_attack --arch i386 --emu bochs --boot disk
                 --cmdline "run=/bin/ut_attack")
# Linux's answers on a CPU Bochs models (its FXSAVE reports another MXCSR_MASK).
toll_system_test(i386.bochs.disk.user.ut_linux --arch i386 --emu bochs --boot disk
                 --cmdline "run=/bin/ut_linux")

# A later program still runs after one that exhausted memory and processes:
# the kernel is healthy afterwards.
toll_system_test(i386.qemu.user.healthy_after_exhaustion --arch i386 --cmdline "run=/bin/sh"
                 --input "ut_exhaust\nut_hello\nexit\n" --expect-output "hello, world"
                 --timeout 90)

# The shell on the console: a pipeline typed at its prompt runs, and exit ends it.
toll_system_test(i386.qemu.user.shell_pipeline --arch i386 --cmdline "run=/bin/sh"
                 --input "echo piped through cat | cat\\nexit\\n" --expect-output "piped through cat")

# ls at the shell prompt lists /bin (a program name only ls can print) and,
# with -aF, the root's "." and ".." marked as directories (musl's readdir
# over getdents64); wc counts a line, three words and 14 bytes from a pipe.
toll_system_test(i386.qemu.user.shell_utils --arch i386 --cmdline "run=/bin/sh"
                 --input "ls /bin\\nls -aF /\\necho one two three | wc\\nexit\\n"
                 --expect-output "lat_pagefault" --expect-output "../" --expect-output "1 3 14")

# i386 only (src/user/i386): isolation holds (every layout). The system-call
# fuzzer is portable now: tests/system/stress.cmake.
foreach(split 3/1 3/1-pti 4/4)
  string(REPLACE "/" "_" tag ${split})
  foreach(prog ut_isolation)
    toll_system_test(i386.qemu.${tag}.user.${prog} --arch i386
                     --cmdline "vm.split=${split} run=/bin/${prog}")
  endforeach()
endforeach()
