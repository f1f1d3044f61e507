# Debian's busybox-static, unmodified, as the userland (tools/deps --busybox
# fetches it; without it these report skipped). One boot per architecture runs
# a script of applets whose outputs busybox_check.py computes on the host, and
# one runs a part of the testsuite of Debian's busybox source package, printing
# its pass count and every failure.
set(TOLL_BUSYBOX_SUITE cut.tests expand.tests fold.tests head.tests nl.tests rev.tests
    seq.tests sort.tests tr.tests uniq.tests printf.tests tail.tests comm.tests
    sed.tests xargs.tests)
foreach(arch i386 arm64)
  add_test(NAME system.${arch}.qemu.busybox.applets
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/busybox_check.py --arch ${arch}
                   --build ${CMAKE_BINARY_DIR} --applets)
  set_tests_properties(system.${arch}.qemu.busybox.applets PROPERTIES TIMEOUT 150
                       SKIP_RETURN_CODE 77)
  add_test(NAME system.${arch}.qemu.busybox.testsuite
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/busybox_check.py --arch ${arch}
                   --build ${CMAKE_BINARY_DIR} --min-pass ${TOLL_BUSYBOX_MIN_PASS}
                   --suite ${TOLL_BUSYBOX_SUITE})
  set_tests_properties(system.${arch}.qemu.busybox.testsuite PROPERTIES TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endforeach()
