# Copy-on-write fork (vm.fork=): ut_cow runs under every i386 layout through
# user.cmake; here it runs on arm64 too, and under vm.fork=copy, where it
# checks that fork copied every page instead of sharing it. With "short" it
# also checks a copy that memory is too short for (the fault injector is
# armed at boot for it: fail.alloc=0 injects nothing by itself).
toll_system_test(arm64.qemu.user.ut_cow --arch arm64 --cmdline "fail.alloc=0 run=/bin/ut_cow short")
toll_system_test(i386.qemu.fork_copy.user.ut_cow --arch i386 --cmdline "vm.fork=copy run=/bin/ut_cow copy")
