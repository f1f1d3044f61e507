# Stress tests (src/user/stress). Many mappings stay cheap and memory comes
# back (the layout does not matter: one boot per architecture); a short slice
# of the seeded system-call fuzzer under every i386 layout and on arm64 (the
# long run is `make fuzz`, tests/system/fuzz_long.py); fault injection over
# a few user tests, every run leak-free (pages and open files).
toll_system_test(i386.qemu.stress.ut_manymaps --arch i386 --cmdline "run=/bin/ut_manymaps")
toll_system_test(arm64.qemu.stress.ut_manymaps --arch arm64 --cmdline "run=/bin/ut_manymaps")

foreach(split 3/1 3/1-pti 4/4)
  string(REPLACE "/" "_" tag ${split})
  toll_system_test(i386.qemu.${tag}.stress.ut_fuzz --arch i386
                   --cmdline "vm.split=${split} run=/bin/ut_fuzz calls=10000 seed=1")
endforeach()
toll_system_test(arm64.qemu.stress.ut_fuzz --arch arm64 --cmdline "run=/bin/ut_fuzz calls=10000 seed=1")

toll_system_test(i386.qemu.stress.ut_failsweep --arch i386 --cmdline
                 "fail.alloc=0 run=/bin/ut_failsweep ut_hello ut_forkexec ut_pipe ut_efault ut_layout ut_files")
toll_system_test(arm64.qemu.stress.ut_failsweep --arch arm64 --cmdline
                 "fail.alloc=0 run=/bin/ut_failsweep ut_hello ut_forkexec ut_pipe ut_mmap ut_files")


# A fuzzed child once exec'd /bin/ut_fuzz itself (a path at the top of its
# stack, 16 KB granule), and the two watchers each took the other's system
# calls for progress, so neither ever ended its child and the run never
# finished. The watch now counts the child's own calls, which an exec drops:
# the exec'd driver makes none of them and must be ended. `exec-self` makes
# that child on purpose, so the test does not hang on one seed's call stream.
toll_system_test(arm64.qemu.16k.stress.ut_fuzz_exec_self --arch arm64 --granule 16K --timeout 30
                 --cmdline "run=/bin/ut_fuzz exec-self"
                 --expect-output "made no call for two ticks: ended with SIGKILL")
toll_system_test(i386.qemu.stress.ut_fuzz_exec_self --arch i386 --timeout 30
                 --cmdline "run=/bin/ut_fuzz exec-self"
                 --expect-output "made no call for two ticks: ended with SIGKILL")

# Fork, exec, exit, mmap/mprotect/munmap, pipes and signals from one worker
# per CPU at once, at 1 and 2 CPUs: every worker finishes, the lock-order
# checker (on in every boot) reports nothing, and the heap's live objects and
# the available pages come back. The long runs at 2 and 4 CPUs are
# `make stress` (tests/system/stress_long.py).
# At 2 CPUs with smp.user=1, so that the workers' processes run on both.
foreach(arch i386 arm64)
  toll_system_test(${arch}.qemu.cpus1.stress.ut_stress --arch ${arch} --timeout 60
                   --cmdline "run=/bin/ut_stress iters=10")
  toll_system_test(${arch}.qemu.cpus2.stress.ut_stress --arch ${arch} --cpus 2 --timeout 60
                   --cmdline "smp.user=1 run=/bin/ut_stress iters=10")
endforeach()
