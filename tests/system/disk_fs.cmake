# ext2 on a real disk (tests/system/disk_fs.py): per architecture one boot
# runs the whole workload on an image from Debian's mke2fs, then e2fsck -fn
# on the host must find it clean and debugfs read back the guest's files;
# two short boots follow on hostile images (a corrupt superblock refused, a
# damaged directory, block pointer and ".." each answered with an error).
foreach(arch ${TOLL_ARCHES})
  set(name system.${arch}.qemu.disk.ext2)
  add_test(NAME ${name}
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/disk_fs.py
                   --work ${CMAKE_BINARY_DIR}/disk-fs-${arch}
                   -- --build ${CMAKE_BINARY_DIR} --arch ${arch} --quiet --timeout 60)
  set_tests_properties(${name} PROPERTIES TIMEOUT 180 PASS_REGULAR_EXPRESSION "disk_fs: PASS")
endforeach()

# Under Bochs the data disk is the boot disk's slave (ata0-slave): the
# workload alone, since Bochs is slow.
if("i386" IN_LIST TOLL_ARCHES)
  add_test(NAME system.i386.bochs.disk.ext2
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/disk_fs.py
                   --work ${CMAKE_BINARY_DIR}/disk-fs-bochs --no-hostile
                   -- --build ${CMAKE_BINARY_DIR} --arch i386 --emu bochs --boot disk --quiet
                      --timeout 120)
  set_tests_properties(system.i386.bochs.disk.ext2 PROPERTIES TIMEOUT 240
    PASS_REGULAR_EXPRESSION "disk_fs: PASS")
endif()

# A --disk image that does not exist is a clear error before any emulator starts.
toll_system_test(disk.missing_image --arch i386 --disk ${CMAKE_BINARY_DIR}/no-such-disk.img)
set_tests_properties(system.disk.missing_image PROPERTIES
  PASS_REGULAR_EXPRESSION "no such disk image")

# The short crash sweep of ext3's journal (make crash runs the long one): the
# power is cut before five chosen disk writes of a run that fsyncs file after
# file; after each cut e2fsck -fy replays the journal and must fix nothing
# more, e2fsck -fn finds the disk clean, and every file announced as fsynced
# is whole.
foreach(arch ${TOLL_ARCHES})
  set(name system.${arch}.qemu.disk.crash_sweep)
  add_test(NAME ${name}
           COMMAND ${TOLL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/crash_sweep.py
                   --work ${CMAKE_BINARY_DIR}/crash-sweep-${arch} --cuts 5 --files 16
                   -- --build ${CMAKE_BINARY_DIR} --arch ${arch})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "crash_sweep: PASS")
endforeach()

# The loaderless boot from its virtio disk with a data disk on IDE: the boot
# order must still pick the boot disk, and the kernel mounts the data disk.
toll_system_test(i386.qemu.disk.boot_with_data_disk --arch i386 --boot disk --disk new:ext2
                 --cmdline "run=/bin/ls /mnt" --expect-output "lost+found")
