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
