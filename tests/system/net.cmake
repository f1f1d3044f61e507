# The network card on the wire: one boot per architecture, under QEMU, with
# eth0 on QEMU's user network and eth1 wired to the host program
# tools/netpeer (tools/run --net user --net-frames). The device.* ktests
# (src/kernel/dev/e1000_ktests.cpp) exchange ARP with QEMU's gateway, fill
# the transmit ring, send UDP to tools/netpeer's echo server on the host
# (10.0.2.2 from the guest) and check the echo, and take tools/netpeer's
# hostile frames on eth1. PASS needs every ktest to pass, six of them (no
# skip: net.frames=1 and net.echo=PORT are given).
# With the stack's sockets in the tree, the same boot also runs udp_echo
# (src/user/net/): the echo check again, through socket, sendto, poll and
# recvfrom. A tree without them has no program to run it with.
set(TOLL_NET_RUN "")
set(TOLL_NET_PASSES 6)
if(EXISTS ${CMAKE_SOURCE_DIR}/src/kernel/net/socket.cpp)
  set(TOLL_NET_RUN " run=/bin/udp_echo 10.0.2.2 {echo}")
  set(TOLL_NET_PASSES 7)
endif()
foreach(arch i386 arm64)
  if(NOT "${arch}" IN_LIST TOLL_ARCHES)
    continue()
  endif()
  set(name system.${arch}.qemu.net.e1000)
  add_test(NAME ${name}
           COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/netpeer --echo auto --frames auto --
                   ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --arch ${arch}
                   --net user --net-frames {frames} --nonce net${arch}
                   --cmdline "test=device.* net.frames=1 net.echo={echo}${TOLL_NET_RUN}")
  set_tests_properties(${name} PROPERTIES TIMEOUT 120
    PASS_REGULAR_EXPRESSION "DONE ${TOLL_NET_PASSES} passed, 0 failed, 0 skipped.*tools/run: DONE: every test passed")
endforeach()

# What tools/run refuses before any emulator starts: a socket-wired card
# under Bochs, which has no such backend.
add_test(NAME system.net.frames_refused_under_bochs
         COMMAND ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --emu bochs --net user
                 --net-frames 5555)
set_tests_properties(system.net.frames_refused_under_bochs PROPERTIES
  PASS_REGULAR_EXPRESSION "--net-frames needs QEMU")

# A QEMU without the e1000 model (a stand-in first on PATH): tools/run must
# say so, and what to install, instead of starting a guest without a card.
add_test(NAME system.net.refused_without_e1000
         COMMAND sh -c "PATH=\"$0:$PATH\" exec \"$1\" \"$2\" --build \"$3\" --net user"
                 ${CMAKE_CURRENT_SOURCE_DIR}/fake_qemu ${TOLL_PYTHON} ${TOLL_RUN} ${CMAKE_BINARY_DIR})
set_tests_properties(system.net.refused_without_e1000 PROPERTIES
  PASS_REGULAR_EXPRESSION "has no e1000 device model.*drop --net")
