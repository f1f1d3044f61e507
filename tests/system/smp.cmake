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
# i386 does not start its other CPUs yet: with two, the boot CPU alone runs
# every ktest, and says so.
toll_system_test(i386.qemu.smp.cpus2.boot_cpu_only --arch i386 --cpus 2 --cmdline "test=kern.*"
                 --expect-output "i386 starts no other CPU yet")

# musl's threads, mutexes, condition variables, barriers and futexes with
# several CPUs booted: the user tests that run threads, on whichever CPUs
# the scheduler gives them.
foreach(arch i386 arm64)
  foreach(n 2 4)
    toll_system_test(${arch}.qemu.smp.cpus${n}.threads --arch ${arch} --cpus ${n}
                     --cmdline "run=/bin/ut_threads,/bin/ut_futex,/bin/ut_clone" --timeout 90)
  endforeach()
endforeach()
