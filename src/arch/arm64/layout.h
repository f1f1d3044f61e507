/* The arm64 kernel's physical layout on QEMU's virt machine and its boot
   constants, shared by assembly and C++ (so only #define here). The kernel
   runs in the upper half of the address space, through TTBR1_EL1, at
   KERNEL_VA_BASE + its physical address; entry.S turns the MMU on. */
#pragma once

/* Arm ARM D8.2.3: with T1SZ = 25, TTBR1_EL1 translates the top 2^39 bytes,
   [0xFFFFFF8000000000, 2^64). The kernel maps physical address p at
   KERNEL_VA_BASE + p there (linker.ld repeats this value). */
#define KERNEL_VA_BASE 0xFFFFFF8000000000

/* QEMU hw/arm/virt.c memory map: RAM starts at 1 GB, the first PL011 at 144 MB. */
#define VIRT_RAM_BASE 0x40000000
#define VIRT_PL011_BASE 0x09000000
/* QEMU hw/arm/boot.c: for an ELF kernel linked at least 2 MB above the start
   of RAM, the device tree blob is placed at the start of RAM (x0 is not set). */
#define VIRT_DTB_ADDRESS VIRT_RAM_BASE
#define KERNEL_LOAD_PHYS (VIRT_RAM_BASE + 0x200000)
#define BOOT_STACK_SIZE 16384

/* Arm ARM (DDI 0487), SPSR_EL2: return to EL1 using SP_EL1 (EL1h) with
   D, A, I and F masked. */
#define SPSR_EL1H_DAIF_MASKED 0x3C5
/* Arm ARM, HCR_EL2.RW (bit 31): EL1 runs in AArch64. */
#define HCR_EL2_RW (1 << 31)
/* Arm ARM, CNTHCTL_EL2: EL1PCTEN (bit 0) and EL1PCEN (bit 1) let EL1
   read the physical counter and use the physical timer. */
#define CNTHCTL_EL2_EL1_ACCESS 0x3
/* Arm ARM, SCTLR_EL1: the RES1 bits of the register (11, 20, 22,
   23, 28, 29) with the MMU, caches and alignment checking all off, little-endian. */
#define SCTLR_EL1_MMU_OFF 0x30D00800

/* QEMU hw/arm/virt.c memory map: the GICv2 distributor and CPU interface. */
/* Offsets in toll::arm64::SecondaryStart (smp.cpp), which entry.S reads
   with the MMU off to start another CPU. */
#define SS_MAIR 0
#define SS_TCR 8
#define SS_TTBR 16
#define SS_SCTLR 24
#define SS_STACK 32
#define SS_CPU 40

#define VIRT_GICD_BASE 0x08000000
#define VIRT_GICC_BASE 0x08010000

/* The trap frame of machine/context.h, for vectors.S: x0-x30, then these. */
#define TF_SP_EL0 248
#define TF_ELR 256
#define TF_SPSR 264
#define TF_ESR 272
#define TF_FAR 280
#define TRAP_FRAME_SIZE 288
