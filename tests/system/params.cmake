# Command-line words a user mistypes are reported, never silently ignored: a
# value that names no choice gets a warning that lists the choices and says
# which one is used. And run= passes quoted arguments whole, as a shell would,
# so the README's `run=/bin/sh -c "echo hi | cat"` works as written.
toll_system_test(i386.qemu.params.bad_values_are_reported --arch i386
  --cmdline "vm.split=5/5 vm.fork=bogus vm.global=maybe vm.walks=yes fpu.switch=fast fpu.clean=x fpu.leak=y fpu.bug=7 fpu.selftest=z run=/bin/sh -c \"echo quoted, kept | cat\""
  --expect-output "warning: vm.split=5/5 is not one of 3/1 3/1-pti 4/4: using 4/4"
  --expect-output "warning: vm.fork=bogus is not one of cow copy: using cow"
  --expect-output "warning: vm.global=maybe is not one of on off: using on"
  --expect-output "warning: vm.walks=yes is not one of off count: using off"
  --expect-output "warning: fpu.switch=fast is not one of lazy eager: using lazy"
  --expect-output "warning: fpu.clean=x is not one of always flag patched nops idt off: using always"
  --expect-output "warning: fpu.leak=y is not one of off simulate: using off"
  --expect-output "warning: fpu.bug=7 is not one of 0 1"
  --expect-output "warning: fpu.selftest=z is not one of off kernel_nm: using off"
  --expect-output "quoted, kept")
# The loaderless boot reads the vm86.* keys before anything else.
toll_system_test(i386.qemu.disk.params.bad_values_are_reported --arch i386 --boot disk
  --cmdline "vm86.e820=nah run=/bin/true"
  --expect-output "warning: vm86.e820=nah is not one of on off: using on")
toll_system_test(arm64.qemu.params.bad_values_are_reported --arch arm64
  --cmdline "fpu.switch=fast arm64.asid=maybe run=/bin/true"
  --expect-output "warning: fpu.switch=fast is not one of lazy eager: using lazy"
  --expect-output "warning: arm64.asid=maybe is not one of on off: using on")
set_tests_properties(system.i386.qemu.params.bad_values_are_reported
  system.i386.qemu.disk.params.bad_values_are_reported
  system.arm64.qemu.params.bad_values_are_reported PROPERTIES LABELS fast)
