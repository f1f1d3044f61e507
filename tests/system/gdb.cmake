# Debugging as the book's appendix describes it: gdb-multiarch, through
# tools/gdbinit (tools/gdbinit-arm64), stops in kernel_main under
# `tools/run --gdb` and prints the checkout's source lines, C++ and assembly.
foreach(arch i386 arm64)
  add_test(NAME system.${arch}.qemu.gdb_finds_sources
    COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gdb_source.py --arch ${arch}
            --build ${CMAKE_BINARY_DIR})
  set_tests_properties(system.${arch}.qemu.gdb_finds_sources PROPERTIES TIMEOUT 180
    ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
endforeach()
