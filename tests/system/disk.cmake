# System tests of the loaderless boot (src/arch/i386/boot/bootsect/) under
# QEMU and Bochs: the real kernel from toll-disk.img, and the boot sector
# alone with its stand-in kernel (loadertest.S) and a disk cut short.
if(NOT "i386" IN_LIST TOLL_ARCHES)
  return()
endif()

set(TOLL_BOOTSECT_DIR ${CMAKE_BINARY_DIR}/i386/arch/i386/boot/bootsect)

foreach(emu qemu bochs)
  # The in-kernel tests, booted from the disk. The nonce travels in the
  # command-line sector, so records count only if that sector arrived; the
  # console (not --quiet here) must also show that no loader handed over a
  # memory map, so the kernel probed the BIOS for one (src/arch/i386/vm86/).
  set(name system.i386.${emu}.disk.ktests)
  add_test(NAME ${name}
           COMMAND ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --arch i386 --emu ${emu}
                   --boot disk --cmdline "test=*" --nonce disk${emu})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120
    PASS_REGULAR_EXPRESSION "memory map \\(BIOS probe\\).*DONE [1-9][0-9]* passed, 0 failed.*tools/run: DONE: every test passed")

  # The boot sector's promises to the kernel: magic, a whole 511-byte command
  # line in low memory, flat protected mode with interrupts and paging off,
  # and a 4 MB kernel copied above 1 MB intact.
  string(REPEAT "x" 480 pad)
  toll_system_test(i386.${emu}.disk.bootsect --arch i386 --emu ${emu} --boot disk
                   --kernel ${TOLL_BOOTSECT_DIR}/toll-loadertest.img
                   --cmdline "loader-test ${pad} end")

  # A disk shorter than its kernel: the boot sector must say so and stop.
  toll_system_test(i386.${emu}.disk.read_error --arch i386 --emu ${emu} --boot disk
                   --kernel ${TOLL_BOOTSECT_DIR}/toll-shortdisk.img
                   --expect-panic "boot sector: disk read error")

  # tools/run --add on the loaderless boot: the program, built with tools/cc
  # as a student would, is appended to the private disk past the kernel's
  # memory and found in /bin (it is in no ramdisk the build made).
  set(added ${CMAKE_BINARY_DIR}/i386-${emu}-added/added_program)
  add_test(NAME system.i386.${emu}.disk.added_program
           COMMAND sh -c "mkdir -p \"$(dirname \"$0\")\" && sh \"$1\" -o \"$0\" \"$2\" && exec \"$3\" \"$4\" --build \"$5\" --quiet --arch i386 --emu ${emu} --boot disk --add \"$0\" --expect-output 'added program ran' --cmdline run=/bin/added_program"
                   ${added} ${CMAKE_SOURCE_DIR}/tools/cc ${CMAKE_CURRENT_SOURCE_DIR}/added_program.c
                   ${TOLL_PYTHON} ${TOLL_RUN} ${CMAKE_BINARY_DIR})
  set_tests_properties(system.i386.${emu}.disk.added_program PROPERTIES TIMEOUT 120)

  # A kernel that triple-faults is reported as a reset, not as a hang.
  toll_system_test(i386.${emu}.disk.triple_fault_is_reset --arch i386 --emu ${emu} --boot disk
                   --kernel ${TOLL_BOOTSECT_DIR}/toll-loadertest.img --cmdline "triple-fault")
  set_tests_properties(system.i386.${emu}.disk.triple_fault_is_reset PROPERTIES
    PASS_REGULAR_EXPRESSION "tools/run: RESET: ")
endforeach()

# The command-line sector holds 511 bytes and a NUL; tools/run refuses more.
string(REPEAT "x" 512 toolong)
toll_system_test(i386.disk.cmdline_too_long --arch i386 --emu qemu --boot disk --cmdline "${toolong}")
set_tests_properties(system.i386.disk.cmdline_too_long PROPERTIES
  PASS_REGULAR_EXPRESSION "holds at most 511")

# Bochs with clock: sync=none counts time in instructions: a timed loop must
# read the same count on every boot (tests/system/determinism.py).
add_test(NAME system.i386.bochs.determinism
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py --metric kern.loop_100k
                 -- --build ${CMAKE_BINARY_DIR} --arch i386 --emu bochs --boot disk
                    --cmdline "test=kern.deterministic_loop")
set_tests_properties(system.i386.bochs.determinism PROPERTIES TIMEOUT 120)
