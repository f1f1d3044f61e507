// The last look at a trap frame before it goes back to user mode. The exit
// path (trap_entry.S) pops DS, ES, FS and GS in ring 0 and then irets to CS
// and SS: a selector whose descriptor is gone, or one a program wrote into a
// signal frame, would fault inside the kernel. Every value that path loads
// is checked here, on every return, whichever way it got into the frame.
#include "arch/i386/cpu.h"
#include "arch/i386/trap.h"

namespace toll::i386 {
namespace {

// Intel SDM Vol. 3, 3.4.2: a selector is index << 3 | TI << 2 | RPL; index 0
// with TI 0 is the null selector, whatever its RPL.
constexpr uint32_t k_selector_bits = 0xFFFF, k_rpl_mask = 3;
constexpr unsigned k_index_shift = 3;
constexpr uint32_t k_ti_bit = 1u << 2;

// Intel SDM Vol. 3, 2.3: EFLAGS bits a user program may not choose: IF
// (always set in user mode), IOPL (always 0: port I/O and cli fault), VM,
// VIF and VIP (virtual-8086 mode, which Toll never gives a program).
constexpr uint32_t k_eflags_if = 1u << 9, k_eflags_iopl = 3u << 12, k_eflags_vif = 1u << 19,
                   k_eflags_vip = 1u << 20;

bool is_null(uint32_t sel)
{
    return (sel & k_selector_bits & ~k_rpl_mask) == 0;
}

// A GDT selector (TI clear) naming @p slot, with any RPL.
bool names(uint32_t sel, GdtSlot slot)
{
    return !(sel & k_ti_bit) && ((sel & k_selector_bits) >> k_index_shift) == slot;
}

// DS, ES, FS, GS: null, the user data segment, the user code segment (it is
// readable, so Intel SDM Vol. 3, 5.6 lets a data register hold it; Linux
// keeps it there too), or the TLS slot while it holds a segment. Any RPL: a
// DPL 3 segment admits them all.
bool data_selector_ok(uint32_t sel, const arch::TlsSegment& tls)
{
    return is_null(sel) || names(sel, k_gdt_user_data) || names(sel, k_gdt_user_code) ||
           (names(sel, k_gdt_user_tls) && tls.present());
}

// SS: RPL 3 and a writable DPL 3 data segment (Intel SDM Vol. 3, 6.12.1,
// the checks iret makes on the outer stack segment).
bool stack_selector_ok(uint32_t sel, const arch::TlsSegment& tls)
{
    if ((sel & k_rpl_mask) != 3)
        return false;
    return names(sel, k_gdt_user_data) ||
           (names(sel, k_gdt_user_tls) && tls.present() && tls.writable());
}

} // namespace

bool user_frame_check(arch::TrapFrame& f, const arch::TlsSegment& tls)
{
    // Almost every frame holds what a program normally has: the user code
    // and data segments, null, or its TLS selector, and clean flags. This
    // runs on every system call, so that case costs a few compares.
    const uint32_t tls_selector = tls.present() ? selector(k_gdt_user_tls, 3) : 0;
    auto usual = [tls_selector](uint32_t sel) {
        sel &= k_selector_bits;
        return sel == 0 || sel == k_user_ds || sel == tls_selector;
    };
    constexpr uint32_t k_checked_flags =
        k_eflags_if | k_eflags_iopl | arch::TrapFrame::k_eflags_vm | k_eflags_vif | k_eflags_vip;
    if ((f.cs & k_selector_bits) == k_user_cs && (f.user_ss & k_selector_bits) == k_user_ds &&
        usual(f.ds) && usual(f.es) && usual(f.fs) && usual(f.gs) &&
        (f.eflags & k_checked_flags) == k_eflags_if)
        return true;
    uint32_t* data_segments[] = {&f.ds, &f.es, &f.fs, &f.gs};
    for (uint32_t* seg : data_segments)
        if (!data_selector_ok(*seg, tls))
            *seg = 0; // as Linux does: the program finds a null register
    f.eflags =
        (f.eflags & ~(k_eflags_iopl | arch::TrapFrame::k_eflags_vm | k_eflags_vif | k_eflags_vip)) |
        k_eflags_if;
    if ((f.cs & k_selector_bits) == k_user_cs && stack_selector_ok(f.user_ss, tls))
        return true;
    // Nothing can resume here: give the program a frame that can be restored
    // and let the caller deliver SIGSEGV.
    f.cs = k_user_cs;
    f.user_ss = k_user_ds;
    return false;
}

} // namespace toll::i386
