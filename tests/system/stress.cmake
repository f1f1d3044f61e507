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


# A replay that once never finished (16 KB granule): child 335 of seed 5
# execs /bin/ut_fuzz itself (its path lies at the top of the stack), and the
# two watchers each took the other's system calls for progress, so neither
# ever ended its child. The watch now counts the child's own calls; the
# exec'd driver makes none of them and is ended. If a change to the fuzzer
# alters this child's calls, the expected line goes and this test says so.
toll_system_test(arm64.qemu.16k.stress.ut_fuzz_replay_exec --arch arm64 --granule 16K --timeout 30
                 --cmdline "run=/bin/ut_fuzz seed=5 child=335 verbose"
                 --expect-output "made no call for two ticks: ended with SIGKILL")
