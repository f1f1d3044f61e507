# Several CPUs and the locks between them: a planted lock-order reversal, a
# recursive acquisition and a sleep with a spinlock held each end the run
# with a PANIC that names the lock (the non-destructive checks are ktests).
foreach(arch i386 arm64)
  toll_system_test(${arch}.qemu.lock_order.inversion_panics --arch ${arch}
                   --cmdline "test=destructive.lock_order.inversion_panics"
                   --expect-panic "lock order reversal: cpu0 takes destructive.first")
  toll_system_test(${arch}.qemu.lock_order.recursion_panics --arch ${arch}
                   --cmdline "test=destructive.lock_order.recursion_panics"
                   --expect-panic "takes destructive.once")
  toll_system_test(${arch}.qemu.lock_order.sleep_with_spinlock_panics --arch ${arch}
                   --cmdline "test=destructive.lock_order.sleep_with_spinlock_panics"
                   --expect-panic "sleeps with spinlock destructive.held_asleep")
  # A CPU stuck on a spinlock with interrupts off names the lock, its holder
  # and where it was itself, instead of a silent hang.
  toll_system_test(${arch}.qemu.watchdog.stuck_spinlock_panics --arch ${arch}
                   --cmdline "test=destructive.watchdog.a_cpu_stuck_on_a_spinlock_panics lock.watchdog=16"
                   --expect-panic "watchdog: cpu0 spun 65536 turns with interrupts off waiting for destructive.stuck"
                   --expect-panic "held by cpu1")
endforeach()

# arm64 starts every CPU of the device tree through PSCI: each names itself on
# the console, and the ktests check every Cpu came online, idle.
foreach(n 2 4)
  math(EXPR last "${n} - 1")
  toll_system_test(arm64.qemu.smp.cpus${n}.online --arch arm64 --cpus ${n}
                   --cmdline "test=kern.cpu.*"
                   --expect-output "cpu${last}: online, mpidr 0x${last}"
                   --expect-output "smp: ${n} of ${n} CPUs online")
  # With several vCPUs QEMU's -icount runs them in turn on one thread: the
  # numbers stay exact.
  add_test(NAME system.arm64.qemu.smp.cpus${n}.determinism
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py
                   --metric kern.loop_100k
                   -- --build ${CMAKE_BINARY_DIR} --arch arm64 --cpus ${n}
                      --cmdline "test=kern.deterministic_loop")
  set_tests_properties(system.arm64.qemu.smp.cpus${n}.determinism PROPERTIES TIMEOUT 120)
endforeach()
# i386 starts every CPU of the ACPI MADT with INIT-SIPI-SIPI: each names its
# local APIC, the ktests check each is online, idle, takes an IPI and ticks.
# The default layout (4/4) at 2 and 4 CPUs, the other two at 4.
foreach(n 2 4)
  math(EXPR last "${n} - 1")
  toll_system_test(i386.qemu.smp.cpus${n}.online --arch i386 --cpus ${n}
                   --cmdline "test=kern.cpu.*"
                   --expect-output "cpu${last}: online, apic id ${last}"
                   --expect-output "smp: ${n} of ${n} CPUs online")
  # The IPI's trip crosses CPUs: under -icount it too must repeat exactly.
  add_test(NAME system.i386.qemu.smp.cpus${n}.determinism
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py
                   --metric kern.ipi.send_to_handler
                   -- --build ${CMAKE_BINARY_DIR} --arch i386 --cpus ${n}
                      --cmdline "test=kern.cpu.ipi_*")
  set_tests_properties(system.i386.qemu.smp.cpus${n}.determinism PROPERTIES TIMEOUT 120)
endforeach()
# After munmap or mprotect returns, no thread on another CPU still uses the
# old translation (ut_shootdown: the TLB shootdown), and user mode reads
# neither the kernel nor any CPU's trampoline block from any CPU
# (ut_isolation), with user threads on all 4 CPUs, under each layout.
foreach(split 3/1 3/1-pti 4/4)
  string(REPLACE "/" "_" tag ${split})
  toll_system_test(i386.qemu.smp.cpus4.${tag}.shootdown_isolation --arch i386 --cpus 4
                   --cmdline "vm.split=${split} run=/bin/ut_shootdown,/bin/ut_isolation"
                   --timeout 90)
endforeach()
foreach(split 3/1 3/1-pti)
  string(REPLACE "/" "" tag ${split})
  toll_system_test(i386.qemu.smp.cpus4.online_split_${tag} --arch i386 --cpus 4
                   --cmdline "vm.split=${split} test=kern.cpu.*"
                   --expect-output "cpu3: online, apic id 3"
                   --expect-output "smp: 4 of 4 CPUs online")
endforeach()
# Bochs (its own BIOS and ACPI tables) from the loaderless disk: the vm86
# memory probe runs on the boot CPU first, then the second CPU starts.
toll_system_test(i386.bochs.smp.cpus2.online --arch i386 --emu bochs --cpus 2
                 --cmdline "test=kern.cpu.*"
                 --expect-output "memory map (BIOS probe)"
                 --expect-output "cpu1: online, apic id 1"
                 --expect-output "smp: 2 of 2 CPUs online")

# A panic on one CPU stops the others (a stop IPI each) before its record.
foreach(arch i386 arm64)
  toll_system_test(${arch}.qemu.smp.cpus2.panic_stops_others --arch ${arch} --cpus 2
                   --cmdline "test=destructive.lock_order.inversion_panics"
                   --expect-output "panic: cpu0 stopped 1 of 1 other CPUs"
                   --expect-panic "lock order reversal")
endforeach()

# The MP table, for firmware without ACPI (i386.acpi=off forces it): Bochs'
# BIOS lists each CPU there. (SeaBIOS lists one entry per package, so under
# QEMU's default topology, every CPU a core of one package, it names one.)
toll_system_test(i386.bochs.smp.cpus2.mp_table --arch i386 --emu bochs --cpus 2
                 --cmdline "i386.acpi=off test=kern.cpu.every_started_cpu_is_online_and_idle"
                 --expect-output "smp: MP table lists 2 CPUs"
                 --expect-output "smp: 2 of 2 CPUs online")

# The locks lab's checks (labs/lab-locks): the ticket lock excludes and the
# per-CPU counter loses nothing with every CPU in the same loop at once, at 2
# CPUs (the boots of every ktest run them at 1, where nothing can race).
foreach(arch i386 arm64)
  toll_system_test(${arch}.qemu.smp.cpus2.lab_locks --arch ${arch} --cpus 2 --deterministic
                   --cmdline "test=lab.locks.*")
endforeach()

# musl's threads, mutexes, condition variables, barriers and futexes with
# several CPUs booted: the user tests that run threads, on whichever CPUs
# the scheduler gives them.
foreach(arch i386 arm64)
  foreach(n 2 4)
    toll_system_test(${arch}.qemu.smp.cpus${n}.threads --arch ${arch} --cpus ${n}
                     --cmdline "run=/bin/ut_threads,/bin/ut_futex,/bin/ut_clone" --timeout 90)
  endforeach()
endforeach()

# Translations across CPUs (src/user/stress/ut_smp_vm.c), at 4 CPUs on both
# granules: once munmap or mprotect returns (of a page, of a page cut out of
# a contiguous run or an L2 block), no CPU still uses the old translation;
# workers on three CPUs read and write a range while it is promoted, demoted,
# protected and unmapped, and every byte is checked; and with 2 ASID bits
# the generation rolls over with processes coming and going while the range's
# address space runs on the other CPUs: at most one flush per CPU per
# rollover, and (arm64.asid_check=1 at 4 KB; the lock-free path at 16 KB) no
# two CPUs running different spaces under one ASID. The long run is
# `make stress`.
toll_system_test(arm64.qemu.smp.cpus4.vm --arch arm64 --cpus 4 --timeout 90
                 --cmdline "arm64.asid_bits=2 arm64.asid_check=1 run=/bin/ut_smp_vm,/bin/ut_forkexec")
toll_system_test(arm64.qemu.16k.smp.cpus4.vm --arch arm64 --granule 16K --cpus 4 --timeout 90
                 --cmdline "arm64.asid_bits=2 run=/bin/ut_smp_vm,/bin/ut_forkexec")

# Every user test program in one boot, with their processes and threads free
# to run on every CPU: i386 at 4 CPUs under 3/1-pti (two directories per
# process, per-CPU trampolines, shootdowns by IPI) and arm64 at 2. A signal
# sent to a thread on another CPU just as it goes to sleep, a child's last
# pages freed by another CPU after waitpid: the races of several CPUs that a
# one-CPU boot of the same programs never meets.
file(GLOB toll_smp_suite_sources RELATIVE ${CMAKE_SOURCE_DIR}/src/user/tests
     ${CMAKE_SOURCE_DIR}/src/user/tests/ut_*.c)
set(toll_smp_suite)
# Not ut_superpages_regions: it counts the machine's free pages around each
# step, and here the other CPUs are still freeing the pages of the programs
# before it while it counts. It runs alone on several CPUs instead, below.
foreach(src ${toll_smp_suite_sources})
  get_filename_component(prog ${src} NAME_WE)
  if(NOT prog STREQUAL "ut_superpages_regions")
    list(APPEND toll_smp_suite ${prog})
  endif()
endforeach()
list(JOIN toll_smp_suite "," toll_smp_suite)
toll_system_test(i386.qemu.smp.cpus4.3_1-pti.user.suite --arch i386 --cpus 4 --timeout 100
                 --cmdline "vm.split=3/1-pti run=${toll_smp_suite}")
toll_system_test(arm64.qemu.smp.cpus2.user.suite --arch arm64 --cpus 2 --timeout 100
                 --cmdline "run=${toll_smp_suite}")
toll_system_test(i386.qemu.smp.cpus4.superpages_regions --arch i386 --cpus 4 --timeout 60
                 --cmdline "run=/bin/ut_superpages_regions")
toll_system_test(arm64.qemu.smp.cpus2.superpages_regions --arch arm64 --cpus 2 --timeout 60
                 --cmdline "run=/bin/ut_superpages_regions")
