// The semihosting trap: a debugger (here QEMU with -semihosting-config
// enable=on) services the call. Arm "Semihosting for AArch32 and AArch64"
// (v2.0), "The semihosting interface": on AArch64 the trap is HLT #0xF000, the operation in w0, the
// parameter in x1, the result returned in x0.

    .text
    .balign 4
    .globl arm64_semihosting_call
arm64_semihosting_call:
    .globl arm64_semihosting_trap
arm64_semihosting_trap:
    hlt     #0xf000
    ret
