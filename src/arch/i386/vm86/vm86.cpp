// The vm86 monitor: makes one BIOS call at a time by running the BIOS's
// real-mode code as a virtual-8086 task, with its own GDT, TSS (and I/O
// bitmap), IDT and a page table for the first megabyte, all swapped in for
// the call and swapped back out after it. Owning its descriptor tables lets it
// work at boot before the kernel's exist, and under any address-space layout.
#include "arch/i386/vm86/vm86.h"
#include "arch/i386/cpu.h"
#include "arch/i386/io.h"
#include "arch/i386/layout.h"
#include "arch/i386/mmu.h"
#include "arch/i386/trap.h"
#include "arch/i386/vm86/emulate.h"
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "kernel/kern/counters.h"
#include "kernel/kern/panic.h"
#include "lib/string.h"

extern "C" char vm86_trap_stubs[];
extern "C" void vm86_enter(toll::i386::Vm86Frame* frame);

namespace toll::i386 {
namespace {

// Real-mode memory the monitor uses (below 1 MB, never given to the
// allocator: vm_init keeps the first megabyte out of it).
/// Where the monitor writes `INT n; HLT`: the call starts at the INT and ends
/// at the HLT, which traps because HLT is privileged at CPL 3.
constexpr uint32_t k_stop_code_phys = 0x1000;
constexpr uint16_t k_stop_code_segment = k_stop_code_phys >> 4;
constexpr uint32_t k_int_length = 2; // CD nn
/// The real-mode stack: SS:SP = 0:k_stack_top, growing down to k_buffer_end.
constexpr uint32_t k_stack_top = 0x4000;
/// Pages the low page table maps: 1 MB and the 64 KB of FFFF:0010-FFFF:FFFF
/// that segment arithmetic can reach. Intel SDM Vol. 3, 20.1.1.
constexpr unsigned k_low_pages = (0x100000 + 0x10000) / 4096;
constexpr unsigned k_first_mb_pages = 0x100000 / 4096;
/// A call that traps more often than this is taken to be looping.
constexpr uint32_t k_max_traps_per_call = 1u << 20;

// Intel SDM Vol. 3, 7.2.2 and 3.5: an available 32-bit TSS descriptor, and the
// busy bit that ltr sets and a second ltr refuses.
constexpr uint8_t k_tss_access_available = 0x89;
constexpr uint8_t k_tss_busy_bit = 0x02;
// Intel SDM Vol. 3, 3.4.5: flat 4 GB ring-0 code and data, 4 KB granular, 32-bit.
constexpr uint8_t k_code_access = 0x9A, k_data_access = 0x92, k_flat_flags = 0xCF;
/// The monitor's GDT: code and data in the kernel's slots, so that the
/// kernel's selectors stay valid during a call, and the vm86 TSS after them.
constexpr unsigned k_monitor_tss_slot = 3, k_monitor_gdt_entries = 4;
constexpr uint16_t k_monitor_tss = k_monitor_tss_slot << 3;
static_assert(k_kernel_cs == 1 << 3 && k_kernel_ds == 2 << 3);
// Intel SDM Vol. 3, 20.2.1: EFLAGS for vm86 mode: VM set, IOPL 0 so that the
// IF-sensitive instructions trap, IF clear so that no interrupt arrives
// during the call, and bit 1, which is always 1.
constexpr uint32_t k_vm86_entry_eflags = k_vm86_flag_vm | 0x2;
constexpr unsigned k_idt_vectors = 256;
constexpr unsigned k_stub_size = 16; // .balign 16 in vm86_entry.S

/// The vm86 TSS with its I/O permission bitmap. Intel SDM Vol. 3, 20.2.8 and
/// 19.5.2: in vm86 mode IN and OUT are checked against this bitmap, not
/// IOPL; a 0 bit allows the port, and one byte of all ones must follow the map.
/// The BIOS is trusted here (the Bochs BIOS reads the CMOS inside E820), so
/// every port is allowed.
struct [[gnu::packed]] IoTss {
    Tss tss;
    uint8_t iomap[65536 / 8];
    uint8_t iomap_end;
};

IoTss g_tss;
alignas(8) SegmentDescriptor g_gdt[k_monitor_gdt_entries];
alignas(8) Gate g_idt[k_idt_vectors];
alignas(4096) uint32_t g_low_page_table[k_entries];
/// The monitor's stack (the vm86 TSS's esp0): a trap from vm86 mode pushes
/// its frame at the top, exactly where vm86_enter popped it from.
alignas(16) uint8_t g_stack[8192];
bool g_ready;
bool g_in_call;
Vm86State g_state;
uint32_t g_traps_this_call;
bool g_call_failed;
/// A call made before the kernel loaded a task register (TR was null, and
/// ltr cannot load a null selector) leaves the monitor's TSS in TR; the next
/// call must not take it for the kernel's.
bool g_tr_left_loaded;

TOLL_COUNTER(g_calls, "vm86.calls");
TOLL_COUNTER(g_failures, "vm86.failures");
TOLL_COUNTER(g_trap_cli, "vm86.traps.cli");
TOLL_COUNTER(g_trap_sti, "vm86.traps.sti");
TOLL_COUNTER(g_trap_pushf, "vm86.traps.pushf");
TOLL_COUNTER(g_trap_popf, "vm86.traps.popf");
TOLL_COUNTER(g_trap_int, "vm86.traps.int");
TOLL_COUNTER(g_trap_iret, "vm86.traps.iret");
TOLL_COUNTER(g_trap_hlt, "vm86.traps.hlt");
TOLL_COUNTER(g_trap_other, "vm86.traps.other");

Counter* const k_kind_counters[] = {&g_trap_cli, &g_trap_sti,  &g_trap_pushf, &g_trap_popf,
                                    &g_trap_int, &g_trap_iret, &g_trap_hlt,   &g_trap_other};
static_assert(sizeof k_kind_counters / sizeof k_kind_counters[0] ==
              static_cast<unsigned>(Vm86TrapKind::count));

Vm86Frame& frame_slot()
{
    return *reinterpret_cast<Vm86Frame*>(g_stack + sizeof g_stack - sizeof(Vm86Frame));
}

uint32_t kernel_phys(const void* p)
{
    return reinterpret_cast<uint32_t>(p) - KERNEL_BASE;
}

uint16_t read_tr()
{
    uint16_t tr;
    asm volatile("str %0" : "=r"(tr));
    return tr;
}

// ltr marks the descriptor busy and faults if it already is: clear it first,
// in the GDT that @p gdtr describes (which must be the loaded one).
void load_tr(const TableRegister& gdtr, uint16_t selector)
{
    if ((selector & ~7u) == 0)
        return; // no task register yet (a boot before gdt_init): nothing to reload
    reinterpret_cast<SegmentDescriptor*>(gdtr.base)[selector >> 3].access &=
        static_cast<uint8_t>(~k_tss_busy_bit);
    asm volatile("ltr %w0" : : "r"(selector) : "memory");
}

struct SegmentRegisters {
    uint16_t ds, es, fs, gs;
};

SegmentRegisters read_segments()
{
    SegmentRegisters s;
    asm volatile("movw %%ds, %0\n\tmovw %%es, %1\n\tmovw %%fs, %2\n\tmovw %%gs, %3"
                 : "=r"(s.ds), "=r"(s.es), "=r"(s.fs), "=r"(s.gs));
    return s;
}

void write_segments(const SegmentRegisters& s)
{
    asm volatile("movw %0, %%ds\n\tmovw %1, %%es\n\tmovw %2, %%fs\n\tmovw %3, %%gs"
                 :
                 : "r"(s.ds), "r"(s.es), "r"(s.fs), "r"(s.gs)
                 : "memory");
}

SegmentDescriptor descriptor(uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
    return SegmentDescriptor{static_cast<uint16_t>(limit & 0xFFFF),
                             static_cast<uint16_t>(base & 0xFFFF),
                             static_cast<uint8_t>(base >> 16),
                             access,
                             static_cast<uint8_t>(((limit >> 16) & 0x0F) | flags),
                             static_cast<uint8_t>(base >> 24)};
}

// Reloads SS from its own selector: after lgdt its cached descriptor still
// comes from the previous table.
void reload_ss()
{
    asm volatile("movw %%ss, %%ax\n\tmovw %%ax, %%ss" : : : "eax", "memory");
}

} // namespace

uint8_t* vm86_memory(uint32_t linear)
{
    // Low memory is in the boot mapping and in the direct map alike.
    return reinterpret_cast<uint8_t*>(linear + KERNEL_BASE);
}

uint8_t* vm86_buffer()
{
    return vm86_memory(k_vm86_buffer_phys);
}

void vm86_init()
{
    memset(&g_tss, 0, sizeof g_tss);
    g_tss.tss.ss0 = k_kernel_ds;
    g_tss.tss.esp0 = reinterpret_cast<uint32_t>(g_stack + sizeof g_stack);
    g_tss.tss.iomap_base = offsetof(IoTss, iomap);
    g_tss.iomap_end = 0xFF;
    g_gdt[k_gdt_kernel_code] = descriptor(0, 0xFFFFF, k_code_access, k_flat_flags);
    g_gdt[k_gdt_kernel_data] = descriptor(0, 0xFFFFF, k_data_access, k_flat_flags);
    g_gdt[k_monitor_tss_slot] = descriptor(reinterpret_cast<uint32_t>(&g_tss), sizeof(IoTss) - 1,
                                           k_tss_access_available, 0);

    // Every vector goes to the monitor while a call runs: an interrupt or
    // exception from vm86 mode must never reach the scheduler.
    for (unsigned v = 0; v < k_idt_vectors; ++v) {
        uint32_t stub = reinterpret_cast<uint32_t>(vm86_trap_stubs) + v * k_stub_size;
        g_idt[v] = interrupt_gate(stub);
    }

    // Identity-map low memory for CPL 3. The 64 KB above 1 MB hold the
    // kernel image, so real-mode code may read them but not write them.
    for (unsigned i = 0; i < k_low_pages; ++i)
        g_low_page_table[i] =
            (i << 12) | k_pte_present | k_pte_user | (i < k_first_mb_pages ? k_pte_write : 0);
    g_ready = true;
}

namespace {

/// Marks the one vm86 call in progress for its lifetime: calls never nest
/// and are never preempted (FreeBSD PR i386/38223: a preempted call left the
/// machine on the monitor's stack and hung it).
class [[nodiscard]] OneCall {
  public:
    OneCall()
    {
        TOLL_ASSERT(!g_in_call);
        g_in_call = true;
    }
    ~OneCall() { g_in_call = false; }
    OneCall(const OneCall&) = delete;
    OneCall& operator=(const OneCall&) = delete;
};

/// The switch from the kernel's CPU state to the monitor's: the constructor
/// saves CR3, TR, the GDT and IDT registers, page-directory entry 0 and the
/// data segments, then swaps in the low page table and the monitor's GDT,
/// TSS and IDT; the destructor puts every one of them back, on whatever path
/// leaves the call.
class [[nodiscard]] MonitorState {
  public:
    MonitorState()
        : m_cr3(read_cr3()), m_tr(read_tr()), m_segments(read_segments()),
          m_directory(reinterpret_cast<uint32_t*>((m_cr3 & k_pte_frame) + KERNEL_BASE)),
          m_pde0(m_directory[0])
    {
        if (g_tr_left_loaded && m_tr == k_monitor_tss)
            m_tr = 0;
        asm volatile("sgdt %0\n\tsidt %1" : "=m"(m_gdt), "=m"(m_idt));
        m_directory[0] = kernel_phys(g_low_page_table) | k_pte_present | k_pte_write | k_pte_user;
        if (m_pde0 & k_pte_present)
            load_cr3(m_cr3); // flush the old 0-4 MB translations
        TableRegister monitor_gdt{sizeof g_gdt - 1, reinterpret_cast<uint32_t>(g_gdt)};
        TableRegister monitor_idt{sizeof g_idt - 1, reinterpret_cast<uint32_t>(g_idt)};
        asm volatile("lgdt %0\n\tlidt %1" : : "m"(monitor_gdt), "m"(monitor_idt) : "memory");
        reload_ss();
        load_tr(monitor_gdt, k_monitor_tss);
    }

    ~MonitorState()
    {
        // Both TSS descriptors are busy now; load_tr clears the busy bit of
        // the kernel's before reloading it.
        asm volatile("lgdt %0\n\tlidt %1" : : "m"(m_gdt), "m"(m_idt) : "memory");
        reload_ss();
        load_tr(m_gdt, m_tr);
        g_tr_left_loaded = (m_tr & ~7u) == 0;
        m_directory[0] = m_pde0;
        load_cr3(m_cr3); // forget the low page table's translations
        write_segments(m_segments);
    }

    MonitorState(const MonitorState&) = delete;
    MonitorState& operator=(const MonitorState&) = delete;

  private:
    uint32_t m_cr3;
    uint16_t m_tr;
    SegmentRegisters m_segments;
    uint32_t* m_directory;
    uint32_t m_pde0;
    TableRegister m_gdt, m_idt;
};

} // namespace

bool vm86_intcall(uint8_t vector, Vm86Regs& regs, Vm86CallCost* cost)
{
    if (!g_ready)
        panic("vm86_intcall(0x%x) before vm86_init: the monitor has no TSS or IDT yet", vector);
    Vm86Frame& f = frame_slot();
    bool failed;
    {
        // Undone in reverse order when the block ends: the kernel's state,
        // then the call mark, then the interrupt flag.
        arch::InterruptsOff interrupts_off;
        OneCall one_call;
        g_calls.add();

        // The program: INT vector; HLT.
        uint8_t* code = vm86_memory(k_stop_code_phys);
        code[0] = 0xCD;
        code[1] = vector;
        code[2] = 0xF4;

        MonitorState monitor;
        memset(&f, 0, sizeof f);
        f.eax = regs.eax, f.ebx = regs.ebx, f.ecx = regs.ecx, f.edx = regs.edx;
        f.esi = regs.esi, f.edi = regs.edi, f.ebp = regs.ebp;
        f.ds = regs.ds, f.es = regs.es;
        f.cs = k_stop_code_segment;
        f.eip = 0;
        f.eflags = k_vm86_entry_eflags;
        f.ss = 0;
        f.esp = k_stack_top;
        g_state = Vm86State{};
        g_state.stop_linear = k_stop_code_phys + k_int_length;
        g_traps_this_call = 0;
        g_call_failed = false;

        uint64_t start = rdtsc();
        vm86_enter(&f);
        uint64_t end = rdtsc();
        if (cost) {
            cost->cycles = end - start;
            cost->traps = g_traps_this_call;
        }
        failed = g_call_failed;
    }
    regs.eax = f.eax, regs.ebx = f.ebx, regs.ecx = f.ecx, regs.edx = f.edx;
    regs.esi = f.esi, regs.edi = f.edi, regs.ebp = f.ebp;
    regs.ds = static_cast<uint16_t>(f.ds), regs.es = static_cast<uint16_t>(f.es);
    regs.eflags = f.eflags;
    if (failed) {
        g_failures.add();
        kprintf("vm86: INT 0x%x abandoned: trap %u at %04x:%04x (%s)\n", vector, f.vector,
                f.cs & 0xFFFF, f.eip & 0xFFFF,
                f.vector == k_vec_general_protection ? vm86_trap_kind_name(g_state.last_kind)
                                                     : "not #GP");
    }
    return !failed;
}

} // namespace toll::i386

/// Every trap taken while a call runs (vm86_entry.S): returns 0 to resume
/// vm86 mode, nonzero to end the call.
extern "C" int vm86_trap(toll::i386::Vm86Frame* frame)
{
    using namespace toll::i386;
    constexpr uint32_t k_vec_gp = k_vec_general_protection;
    Vm86Frame& f = *frame;
    if (!(f.eflags & k_vm86_flag_vm))
        toll::panic("trap %u in the vm86 monitor itself at eip 0x%x (error 0x%x)", f.vector, f.eip,
                    f.error);
    ++g_traps_this_call;
    if (f.vector != k_vec_gp || g_traps_this_call > k_max_traps_per_call) {
        g_call_failed = true;
        return 1;
    }
    Vm86Action action = vm86_emulate(f, g_state);
    k_kind_counters[static_cast<unsigned>(g_state.last_kind)]->add();
    if (action == Vm86Action::resume)
        return 0;
    g_call_failed = action == Vm86Action::failed;
    return 1;
}
