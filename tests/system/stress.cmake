# Stress tests (src/user/stress): many mappings stay cheap and memory comes
# back, on both architectures. The layout does not matter to either: one each.
toll_system_test(i386.qemu.stress.ut_manymaps --arch i386 --cmdline "run=/bin/ut_manymaps")
toll_system_test(arm64.qemu.stress.ut_manymaps --arch arm64 --cmdline "run=/bin/ut_manymaps")
