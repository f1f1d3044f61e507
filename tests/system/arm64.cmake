# System tests of the arm64 kernel under QEMU (-M virt -cpu max).
toll_system_test(arm64.qemu.ktests --arch arm64 --cmdline "test=*")
set_tests_properties(system.arm64.qemu.ktests PROPERTIES LABELS fast)

# In deterministic mode CNTVCT counts instructions, so a timed loop must read
# the same count on every boot.
add_test(NAME system.arm64.qemu.determinism
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py --metric kern.loop_100k
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --cmdline "test=kern.deterministic_loop")
set_tests_properties(system.arm64.qemu.determinism PROPERTIES TIMEOUT 120)

# Deterministic mode counts instructions: a loop of exactly 200,000
# instructions must read 200,000 cycles within 1% (not 12,500, as QEMU's
# default 62.5 MHz counter gives).
add_test(NAME system.arm64.qemu.counter_counts_instructions
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py --metric arm64.spin_200k
                 --min 198000 --max 202000
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --deterministic
                    --cmdline "test=arm64.counter_counts_instructions")
set_tests_properties(system.arm64.qemu.counter_counts_instructions PROPERTIES TIMEOUT 60)

# User space at EL0 under the MMU: each user-level test program, run alone.
# A program that fails a check, dies of a fault or cannot start fails the test.
foreach(prog ut_hello ut_forkexec ut_pipe ut_procs64 ut_mmap)
  toll_system_test(arm64.qemu.user.${prog} --arch arm64 --cmdline "run=/bin/${prog}")
endforeach()
