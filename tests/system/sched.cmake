# The scheduler on several CPUs: its ktests (threads spread over the CPUs,
# follow their affinity, wake each other across CPUs without losing a
# wakeup; the policies' levels) at 2 and 4 CPUs under both policies, on both
# ports; user processes on several arm64 CPUs (smp.user=1); the policy
# named at boot, a bad one reported; and a 2-CPU measurement that repeats.
foreach(arch i386 arm64)
  foreach(n 2 4)
    toll_system_test(${arch}.qemu.sched.cpus${n}.ktests --arch ${arch} --cpus ${n}
                     --cmdline "test=sched.*" --expect-output "sched: policy rr")
    toll_system_test(${arch}.qemu.sched.cpus${n}.mlfq.ktests --arch ${arch} --cpus ${n}
                     --cmdline "sched=mlfq test=sched.*" --expect-output "sched: policy mlfq")
  endforeach()
  toll_system_test(${arch}.qemu.sched.bad_policy_is_reported --arch ${arch}
                   --cmdline "sched=fifo run=/bin/true"
                   --expect-output "warning: sched=fifo is not one of rr mlfq: using rr"
                   --expect-output "sched: policy rr")
endforeach()

# ut_sched -spread N: N unpinned spinning children between them run on more
# than one CPU (the program checks it and prints how many it saw).
foreach(arch i386 arm64)
  foreach(n 2 4)
    toll_system_test(${arch}.qemu.sched.cpus${n}.user_processes_spread --arch ${arch} --cpus ${n}
                     --cmdline "smp.user=1 run=/bin/ut_sched -spread ${n}"
                     --expect-output "user processes on every CPU (smp.user=1)"
                     --expect-output "spinning children ran on")
  endforeach()
endforeach()

# A cross-CPU wake-up measured twice at 2 CPUs gives the same instruction count.
add_test(NAME system.arm64.qemu.sched.cpus2.determinism
         COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/determinism.py
                 --metric lat_sched.wake_cross
                 -- --build ${CMAKE_BINARY_DIR} --arch arm64 --cpus 2
                    --cmdline "smp.user=1 run=/bin/lat_sched wake -n 100")
set_tests_properties(system.arm64.qemu.sched.cpus2.determinism PROPERTIES TIMEOUT 120)
