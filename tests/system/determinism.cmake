# Determinism of the measurements: boot twice in deterministic mode and
# require the same kern.loop_100k (tests/system/determinism.py).
add_test(NAME system.i386.qemu.determinism
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py --metric kern.loop_100k
                 -- --build ${CMAKE_BINARY_DIR} --arch i386 --emu qemu --boot multiboot
                    --cmdline "test=kern.deterministic_loop")
set_tests_properties(system.i386.qemu.determinism PROPERTIES TIMEOUT 120)
