# System tests of the arm64 kernel under QEMU (-M virt -cpu max), built for
# each translation granule (CMakeLists.txt: build/arm64 and build/arm64-16k).
toll_system_test(arm64.qemu.ktests --arch arm64 --cmdline "test=*")
set_tests_properties(system.arm64.qemu.ktests PROPERTIES LABELS fast)
# The 16 KB kernel must really run with 16 KB pages (its ktests check TCR_EL1).
toll_system_test(arm64.qemu.16k.ktests --arch arm64 --granule 16K --cmdline "test=*"
                 --expect-output "mmu: 16 KB granule")

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

# User space at EL0 under the MMU: every user test program (the i386-only
# ones live in src/user/i386), one after the other in a single boot per
# granule (run=a,b,...). Each is its own TEST record: a failed check, a fault
# or a program that cannot start fails the run and is named.
file(GLOB TOLL_ARM64_USER_TESTS RELATIVE ${CMAKE_SOURCE_DIR}/src/user/tests
     ${CMAKE_SOURCE_DIR}/src/user/tests/ut_*.c)
set(TOLL_ARM64_USER_RUN)
foreach(src ${TOLL_ARM64_USER_TESTS})
  get_filename_component(prog ${src} NAME_WE)
  list(APPEND TOLL_ARM64_USER_RUN ${prog})
endforeach()
# FP/SIMD register isolation (src/user/fpu), under the default lazy switch.
list(APPEND TOLL_ARM64_USER_RUN fpu_iso)
list(JOIN TOLL_ARM64_USER_RUN "," TOLL_ARM64_USER_RUN)
# The same boot also runs a program that is not in the ramdisk, which only
# tools/run --add can deliver (built here with tools/cc, as a student would).
# The 16 KB boot also squeezes the ASIDs into 2 bits (3 usable), so the fork
# and exec tests roll the ASID generation over again and again; the run must
# report rollovers (the kernel prints only counters that moved).
foreach(granule 4K 16K)
  string(TOLOWER ${granule} tag)
  set(added ${CMAKE_BINARY_DIR}/arm64-${tag}-added/added_program)
  if(granule STREQUAL "4K")
    set(cmdline "--cmdline 'run=${TOLL_ARM64_USER_RUN},added_program'")
  else()
    set(cmdline "--expect-output 'COUNTER vm.pmap.asid.rollovers' --cmdline 'arm64.asid_bits=2 run=${TOLL_ARM64_USER_RUN},added_program'")
  endif()
  add_test(NAME system.arm64.qemu.${tag}.user.suite
           COMMAND sh -c "mkdir -p \"$(dirname \"$0\")\" && sh \"$1\" --arch arm64 -o \"$0\" \"$2\" && exec \"$3\" \"$4\" --build \"$5\" --quiet --arch arm64 --granule ${granule} --timeout 100 --add \"$0\" --expect-output 'added program ran' ${cmdline}"
                   ${added} ${CMAKE_SOURCE_DIR}/tools/cc ${CMAKE_CURRENT_SOURCE_DIR}/added_program.c
                   ${TOLL_PYTHON} ${TOLL_RUN} ${CMAKE_BINARY_DIR})
  set_tests_properties(system.arm64.qemu.${tag}.user.suite PROPERTIES TIMEOUT 120)
endforeach()

# Superpages switched off at boot: the same programs check that nothing is
# reserved or promoted and that memory still works.
toll_system_test(arm64.qemu.user.superpages_off --arch arm64
                 --cmdline "vm.superpages=0 run=/bin/ut_superpages off,/bin/ut_superpages_regions off")

# The FP/SIMD switch (arch/arm64/fpu.cpp). Lazy: a process that uses FP/SIMD
# after every switch to it takes one FP access trap per hop (CPACR_EL1.FPEN)
# and one restore. Eager: the restore happens at the switch and there is no
# trap at all; the registers stay isolated (fpu_iso) in both modes.
add_test(NAME system.arm64.qemu.fpu.lazy_traps_once_per_switch
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py
                 --metric fpu_ctx.2p.fpu.fpu.dna_traps --min 1000 --max 1000
                 --absent lat_ctx.2p_0k.hop.vm.pmap.tlbi.all
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --deterministic
                    --cmdline "fpu.switch=lazy run=fpu_ctx -n 50 2 fpu,lat_ctx -n 50 2 0")
add_test(NAME system.arm64.qemu.fpu.eager_restores_without_traps
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py
                 --metric fpu_ctx.2p.fpu.fpu.restores --min 1000 --max 1000
                 --absent fpu_ctx.2p.fpu.fpu.dna_traps
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --deterministic
                    --cmdline "fpu.switch=eager run=fpu_iso,fpu_ctx -n 50 2 fpu")
set_tests_properties(system.arm64.qemu.fpu.lazy_traps_once_per_switch
                     system.arm64.qemu.fpu.eager_restores_without_traps PROPERTIES TIMEOUT 60)

# The superpage benchmark's numbers in book/generated/metrics.csv (kept equal
# to a fresh measurement by book.numbers.fresh) must show the seed's
# observations: fewer icache syncs and TLB entries, and as many 2 MB L3C runs
# at 16 KB as 2 MB L2 blocks at 4 KB.
add_test(NAME superpages.bench.seed_observations
         COMMAND ${TOLL_PYTHON} ${CMAKE_SOURCE_DIR}/tools/bench-superpages --check)
set_tests_properties(superpages.bench.seed_observations PROPERTIES LABELS fast)

# Without ASIDs (arm64.asid=off) every switch of address space flushes the
# whole TLB again: one TLBI VMALLE1 per hop of lat_ctx; the fork, exec and FP
# tests must pass that way too. (With ASIDs, the lazy-FPU boot above shows
# lat_ctx's hops flushing nothing.)
add_test(NAME system.arm64.qemu.asid_off.flushes_every_switch
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_metric.py
                 --metric lat_ctx.2p_0k.hop.vm.pmap.tlbi.all --min 1000 --max 1000
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --deterministic
                    --cmdline "arm64.asid=off run=ut_forkexec,ut_cow,ut_pipe,fpu_iso,lat_ctx -n 50 2 0")
set_tests_properties(system.arm64.qemu.asid_off.flushes_every_switch PROPERTIES TIMEOUT 90)

# tools/run never ignores an option silently: one that cannot apply fails
# with a message saying why (no boot needed).
add_test(NAME tools.run.granule_is_arm64_only
         COMMAND ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --arch i386 --granule 16K)
add_test(NAME tools.run.arm64_counter_frequency_is_not_negotiable
         COMMAND ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --arch arm64
                 --cpu max,cntfrq=62500000 --cmdline "test=none")
set_tests_properties(tools.run.granule_is_arm64_only PROPERTIES LABELS fast
  PASS_REGULAR_EXPRESSION "--granule chooses an arm64 kernel")
set_tests_properties(tools.run.arm64_counter_frequency_is_not_negotiable PROPERTIES LABELS fast
  PASS_REGULAR_EXPRESSION "sets the counter frequency itself")

# The shell on arm64's console: a pipeline typed at its prompt runs.
toll_system_test(arm64.qemu.user.shell_pipeline --arch arm64 --cmdline "run=/bin/sh"
                 --input "echo piped through cat | cat\\nexit\\n" --expect-output "piped through cat")
# ls and wc on arm64 too: the same source, musl and getdents64 (number 61
# here).
toll_system_test(arm64.qemu.user.shell_utils --arch arm64 --cmdline "run=/bin/sh"
                 --input "ls /bin\\nls -aF /\\necho one two three | wc\\nexit\\n"
                 --expect-output "lat_pagefault" --expect-output "../" --expect-output "1 3 14")
# A 16 KB kernel on a CPU without the 16 KB granule (QEMU's cortex-a72) says
# so instead of hanging with the MMU half set up.
add_test(NAME system.arm64.qemu.16k.refuses_cpu_without_granule
         COMMAND ${TOLL_PYTHON} ${TOLL_RUN} --build ${CMAKE_BINARY_DIR} --arch arm64 --granule 16K
                 --cpu cortex-a72 --timeout 30 --cmdline "test=none")
set_tests_properties(system.arm64.qemu.16k.refuses_cpu_without_granule PROPERTIES TIMEOUT 60
  PASS_REGULAR_EXPRESSION "uses the 16 KB granule, which this CPU lacks")
