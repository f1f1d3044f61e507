# System tests of the arm64 kernel under QEMU (-M virt -cpu max).
toll_system_test(arm64.qemu.ktests --arch arm64 --cmdline "test=*")
set_tests_properties(system.arm64.qemu.ktests PROPERTIES LABELS fast)

# In deterministic mode CNTVCT counts instructions, so a timed loop must read
# the same count on every boot.
add_test(NAME system.arm64.qemu.determinism
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py --metric kern.loop_100k
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --cmdline "test=kern.deterministic_loop")
set_tests_properties(system.arm64.qemu.determinism PROPERTIES TIMEOUT 120)

# User space at EL0 under the MMU: each user-level test program, run alone.
# A program that fails a check, dies of a fault or cannot start fails the test.
foreach(prog ut_hello ut_forkexec ut_pipe ut_procs64 ut_mmap)
  toll_system_test(arm64.qemu.user.${prog} --arch arm64 --cmdline "run=/bin/${prog}")
endforeach()
