# The three i386 address-space layouts (vm.split=): the in-kernel tests in
# each, the double fault's clean PANIC in each, and the 4/4 breathing space.
foreach(split 3/1 3/1-pti 4/4)
  string(REPLACE "/" "_" tag ${split})
  toll_system_test(i386.qemu.${tag}.ktests --arch i386 --cmdline "vm.split=${split} test=*")
  toll_system_test(i386.qemu.${tag}.stack_overflow_double_fault --arch i386
                   --cmdline "vm.split=${split} test=destructive.i386.kernel_stack_overflow*"
                   --expect-panic "double fault")
endforeach()
toll_system_test(i386.bochs.4_4.stack_overflow_double_fault --arch i386 --emu bochs --boot disk
                 --cmdline "vm.split=4/4 test=destructive.i386.kernel_stack_overflow*"
                 --expect-panic "double fault")

# With 2 GB of memory, 3/1 can direct-map only 896 MB, and maps all of that
# (a direct map cut short would pass a bound from above alone); 4/4 maps all 2 GB.
add_test(NAME system.i386.qemu.3_1.direct_map_stops_at_896mb
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py
                 --metric vm.direct_map_mb --min 896 --max 896 --
                 --build ${CMAKE_BINARY_DIR} --mem 2048
                 --cmdline "vm.split=3/1 test=i386.layout.direct_map*")
add_test(NAME system.i386.qemu.4_4.direct_map_reaches_2gb
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py
                 --metric vm.direct_map_mb --min 2000 --
                 --build ${CMAKE_BINARY_DIR} --mem 2048
                 --cmdline "vm.split=4/4 test=i386.layout.direct_map*")
set_tests_properties(system.i386.qemu.3_1.direct_map_stops_at_896mb
                     system.i386.qemu.4_4.direct_map_reaches_2gb PROPERTIES TIMEOUT 120)

# The copy edges with every copy on the slow path, and with every one that fits
# on the fast path (the default threshold is covered by the user suite).
foreach(fast 0 4096)
  toll_system_test(i386.qemu.4_4.copy_fast_max_${fast} --arch i386
                   --cmdline "vm.split=4/4 vm.copy_fast_max=${fast} run=/bin/ut_layout")
endforeach()
