/* The i386 kernel's memory layout and boot constants, shared by assembly and
   C++ (so only #define and plain integers here). */
#pragma once

/* The kernel's virtual base: physical address p is mapped at KERNEL_BASE + p. */
#define KERNEL_BASE 0xC0000000
/* The kernel is loaded at 1 MB physical, linked at KERNEL_BASE + 1 MB. */
#define KERNEL_LOAD_PHYS 0x00100000
/* Megabytes of physical memory the boot page directory maps (4 MB pages). */
#define BOOT_MAPPED_MB 16
#define BOOT_STACK_SIZE 16384

/* The trampoline slot: the last 4 MB of every address space, mapped in the
   kernel's page directory and in every user one, under every layout. It holds
   the GDT, IDT, TSSs, the trap entry and exit code, and each CPU's trampoline
   block (see trampoline.h). */
#define TRAMPOLINE_BASE 0xFFC00000
/* The kernel windows of the 4/4 copy slow path, one page per CPU (by Cpu::id). */
#define KERNEL_WINDOW_BASE 0xFF800000
/* Each CPU's trampoline block (trampoline.h TrampolineCpu): its variables at
   the bottom, its stack above them up to TC_STACK_TOP, its copy buffer from
   there to the end. Blocks are aligned to their size, so that an address on
   a CPU's trampoline stack gives its block by masking, and there is one per
   CPU Toll brings up (k_max_cpus, checked in trampoline.h). */
#define TRAMPOLINE_CPU_SIZE 8192
#define TRAMPOLINE_CPUS 8
#define TC_STACK_TOP 4096
#define TRAMPOLINE_COPY_BUFFER 4096
/* Offsets of the variables in a CPU's block (trampoline.h TrampolineCpu). */
#define TV_KERNEL_CR3 0
#define TV_USER_CR3 4
#define TV_KSTACK_TOP 8
#define TV_SAVED_ESP 12
/* Where the exit to user mode puts the user's %eax and the five words iret
   pops, below the top of the CPU's trampoline stack; Cpu::port_word holds
   its address (offset CPU_PORT_WORD in asm_offsets.h). */
#define TC_EXIT_SP (TC_STACK_TOP - 24)
/* vm.split values (trampoline_layout). */
#define LAYOUT_3_1 0
#define LAYOUT_3_1_PTI 1
#define LAYOUT_4_4 2

/* Where the boot CPU copies the real-mode start code for the others
   (smp_boot.S): a page below 1 MB, as a STARTUP IPI needs (Intel SDM Vol. 3,
   8.4.4.1), clear of the BIOS data area below 0x500, the vm86 monitor's
   pages at 0x1000-0x3FFF and the boot sector's 0x7C00. */
#define AP_START_PHYS 0x6000
/* Offsets into what a starting CPU reads (smp.cpp ApStart). */
#define AP_CR0 0
#define AP_CR3 4
#define AP_CR4 8
#define AP_STACK 12
#define AP_CPU 16

/* Multiboot specification 0.6.96, 3.1.1 and 3.2. */
#define MULTIBOOT_HEADER_MAGIC 0x1BADB002
#define MULTIBOOT_HEADER_FLAGS 0x00000003 /* page-align modules, want memory info */
#define MULTIBOOT_LOADER_MAGIC 0x2BADB002
/* Toll's own boot sector passes this in EAX ('TOLL'), the command line in EBX. */
#define TOLL_BOOTSECT_MAGIC 0x544F4C4C

/* Intel SDM Vol. 3, 2.5: control register bits. */
#define CR0_PE 0x00000001
#define CR0_MP 0x00000002
#define CR0_EM 0x00000004
#define CR0_TS 0x00000008
#define CR0_NE 0x00000020
#define CR0_WP 0x00010000
#define CR0_PG 0x80000000
#define CR4_PSE 0x00000010
#define CR4_PGE 0x00000080
#define CR4_OSFXSR 0x00000200
#define CR4_OSXMMEXCPT 0x00000400
