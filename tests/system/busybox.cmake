# Debian's busybox-static, unmodified, as the userland (tools/deps --busybox
# fetches it; without it these report skipped). One boot per architecture runs
# a script of applets whose outputs busybox_check.py computes on the host, and
# one runs a part of the testsuite of Debian's busybox source package, printing
# its pass count and every failure.
# The subset of make check: 125 tests in about 40 s a boot, all of which pass
# on Linux too (busybox_check.py --suite with the same list, run by the i386
# binary on the host's Linux, passes 125). make conformance runs more.
set(TOLL_BUSYBOX_SUITE cut.tests expand.tests fold.tests head.tests nl.tests rev.tests
    seq.tests sort.tests tr.tests uniq.tests printf.tests tail.tests)
set(TOLL_BUSYBOX_MIN_PASS 125)
foreach(arch i386 arm64)
  add_test(NAME system.${arch}.qemu.busybox.applets
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/busybox_check.py --arch ${arch}
                   --build ${CMAKE_BINARY_DIR} --applets)
  set_tests_properties(system.${arch}.qemu.busybox.applets PROPERTIES TIMEOUT 150
                       SKIP_RETURN_CODE 77 ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
  add_test(NAME system.${arch}.qemu.busybox.ash_console
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/busybox_check.py --arch ${arch}
                   --build ${CMAKE_BINARY_DIR} --ash)
  set_tests_properties(system.${arch}.qemu.busybox.ash_console PROPERTIES TIMEOUT 90
                       SKIP_RETURN_CODE 77 ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
  add_test(NAME system.${arch}.qemu.busybox.testsuite
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/busybox_check.py --arch ${arch}
                   --build ${CMAKE_BINARY_DIR} --min-pass ${TOLL_BUSYBOX_MIN_PASS}
                   --suite ${TOLL_BUSYBOX_SUITE})
  set_tests_properties(system.${arch}.qemu.busybox.testsuite PROPERTIES TIMEOUT 300
                       SKIP_RETURN_CODE 77 ENVIRONMENT PYTHONPATH=${CMAKE_SOURCE_DIR}/tools)
endforeach()
