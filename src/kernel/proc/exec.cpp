// execve and the first process: load a static ELF program from the ramdisk
// or the mounted disk into a fresh address space and build the stack the C
// library expects (argc, argv, envp, the auxiliary vector; System V ABI,
// "Process Initialization"). A program of the disk has its read-only
// segments (text, read-only data) mapped from its page-cache pages, not
// copied: a second exec of it reads nothing, copies nothing, and on arm64
// syncs no instruction cache (the pages are known clean).
// The ELF headers are read in elf.cpp, the segments loaded in exec_load.cpp.
#include "kernel/arch/context.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/signal.h"
#include "kernel/fs/mount.h"
#include "kernel/kern/counters.h"
#include "kernel/proc/exec_image.h"
#include "kernel/proc/initrd.h"
#include "kernel/proc/process.h"
#include "kernel/sys/file.h"
#include "kernel/vm/kmalloc.h"
#include "kernel/vm/phys.h"
#include "kernel/vm/vmobject.h"
#include "lib/format.h"
#include "lib/string.h"

namespace toll::proc {
namespace {

TOLL_COUNTER(g_execs, "proc.execs");

// Auxiliary vector types (System V ABI; Linux's numbering).
enum : uintptr_t {
    k_at_null = 0,
    k_at_phdr = 3,
    k_at_phent = 4,
    k_at_phnum = 5,
    k_at_pagesz = 6,
    k_at_entry = 9,
    k_at_uid = 11,
    k_at_euid = 12,
    k_at_gid = 13,
    k_at_egid = 14,
    k_at_hwcap = 16,
    k_at_clktck = 17,
    k_at_secure = 23,
    k_at_random = 25,
};

constexpr size_t k_max_args = 64;
constexpr size_t k_arg_bytes = 65536; // as sys_execve's k_exec_strings

// The program's arguments, gathered in the kernel before the old address
// space goes away.
struct ArgBlock {
    char bytes[k_arg_bytes];
    size_t used = 0;
    const char* argv[k_max_args + 1];
    const char* envp[k_max_args + 1];
    size_t argc = 0, envc = 0;
};

// Builds argc/argv/envp/auxv at the top of the new stack; returns the stack pointer.
uintptr_t build_stack(vm::VmSpace* space, const ArgBlock& args, const Image& image)
{
    uintptr_t top = arch::user_space_limit();
    uintptr_t sp = top;
    uintptr_t argv_at[k_max_args], envp_at[k_max_args];
    auto push_string = [&](const char* s) {
        size_t n = strlen(s) + 1;
        sp -= n;
        return write_user(space, sp, s, n) ? sp : 0;
    };
    for (size_t i = 0; i < args.envc; ++i)
        if (!(envp_at[i] = push_string(args.envp[i])))
            return 0;
    for (size_t i = 0; i < args.argc; ++i)
        if (!(argv_at[i] = push_string(args.argv[i])))
            return 0;
    // 16 bytes for AT_RANDOM: not random (deterministic runs), but present.
    uint8_t random[16];
    for (int i = 0; i < 16; ++i)
        random[i] = static_cast<uint8_t>(0x5A ^ (i * 37));
    sp -= sizeof random;
    uintptr_t random_at = sp;
    if (!write_user(space, sp, random, sizeof random))
        return 0;

    uintptr_t auxv[][2] = {{k_at_phdr, image.phdr},
                           {k_at_phent, image.phent},
                           {k_at_phnum, image.phnum},
                           {k_at_pagesz, arch::k_page_size},
                           {k_at_entry, image.entry},
                           {k_at_uid, 0},
                           {k_at_euid, 0},
                           {k_at_gid, 0},
                           {k_at_egid, 0},
                           {k_at_hwcap, 0},
                           {k_at_clktck, arch::clock_hz()},
                           {k_at_secure, 0},
                           {k_at_random, random_at},
                           {k_at_null, 0}};
    size_t words = 1 + args.argc + 1 + args.envc + 1 + sizeof auxv / sizeof(uintptr_t);
    sp = (sp - words * sizeof(uintptr_t)) & ~uintptr_t(15);
    uintptr_t at = sp;
    auto put = [&](uintptr_t v) {
        bool ok = write_user(space, at, &v, sizeof v);
        at += sizeof v;
        return ok;
    };
    bool ok = put(args.argc);
    for (size_t i = 0; i < args.argc; ++i)
        ok = ok && put(argv_at[i]);
    ok = ok && put(0);
    for (size_t i = 0; i < args.envc; ++i)
        ok = ok && put(envp_at[i]);
    ok = ok && put(0);
    ok = ok && write_user(space, at, auxv, sizeof auxv);
    return ok ? sp : 0;
}

bool add_string(ArgBlock& block, const char* s, const char** slot)
{
    size_t n = strlen(s) + 1;
    if (block.used + n > sizeof block.bytes)
        return false;
    memcpy(block.bytes + block.used, s, n);
    *slot = block.bytes + block.used;
    block.used += n;
    return true;
}

// Maps the port's signal-return code (arch::signal_trampoline), if it has
// any, at signal_trampoline_address() of @p space.
Errno map_trampoline(vm::VmSpace* space)
{
    const uint8_t* code = nullptr;
    size_t size = arch::signal_trampoline(&code);
    if (size == 0)
        return k_ok;
    uintptr_t at = signal_trampoline_address();
    constexpr unsigned k_prot = arch::k_prot_read | arch::k_prot_exec;
    TRY(vm::vmspace_map(space, at, arch::k_page_size, k_prot));
    if (!write_user(space, at, code, size))
        return k_enomem;
    // write_user left the page writable: now its rights (and, on arm64, the
    // instruction cache sync of a page becoming executable).
    arch::pmap_protect(space->pmap, at, at + arch::k_page_size, k_prot);
    return k_ok;
}

// The program at @p path: the ramdisk's bytes, or (under /mnt) an object of
// the disk file's pages, which the caller drops. Any regular file with an
// execute bit (Linux: EACCES otherwise).
Errno open_program(const char* path, ExecFile* file, sys::NodeRef* hold)
{
    char full[256];
    bool relative_on_disk = path[0] && path[0] != '/' && fs::mount_cwd_on_disk();
    if (relative_on_disk)
        TRY(fs::mount_absolute(path, full, sizeof full));
    if (relative_on_disk || fs::mount_owns(path)) {
        uint64_t size = 0;
        Result<vm::VmObject*> object = fs::mount_exec_object(relative_on_disk ? full : path, &size);
        if (!object)
            return object.error();
        file->object = object.value();
        file->size = static_cast<size_t>(size);
        return k_ok;
    }
    // The node is held until the program is loaded.
    Result<sys::NodeRef> node = sys::vfs_lookup(nullptr, path, sys::k_follow);
    if (!node)
        return node.error();
    const sys::Node* n = node.value().get();
    if ((n->mode & sys::k_s_ifmt) != sys::k_s_ifreg || !(n->mode & 0111) ||
        n->proc != sys::ProcKind::none)
        return k_eacces;
    file->data = sys::node_bytes(n);
    file->size = static_cast<size_t>(n->size);
    *hold = node.release_value();
    return k_ok;
}

// Loads @p file into a new address space. On success *out_space, *pc and
// *sp describe the new program.
Errno load_file(const ExecFile& file, const ArgBlock& args, vm::VmSpace** out_space, uintptr_t* pc,
                uintptr_t* sp)
{
    Image image;
    Errno e = elf_read(file, image);
    if (e != k_ok)
        return e;
    vm::VmSpace* space = vm::vmspace_create();
    if (!space)
        return k_enomem;
    uintptr_t limit = arch::user_space_limit();
    if ((e = load_segments(space, file, image)) != k_ok ||
        (e = vm::vmspace_map(space, limit - vm::k_user_stack_size, vm::k_user_stack_size,
                             arch::k_prot_read | arch::k_prot_write)) != k_ok ||
        (e = map_trampoline(space)) != k_ok) {
        vm::vmspace_destroy(space);
        return e;
    }
    *sp = build_stack(space, args, image);
    if (!*sp) {
        vm::vmspace_destroy(space);
        return k_e2big;
    }
    *pc = image.entry;
    *out_space = space;
    return k_ok;
}

Errno load(const char* path, const ArgBlock& args, vm::VmSpace** out_space, uintptr_t* pc,
           uintptr_t* sp)
{
    ExecFile file;
    sys::NodeRef hold;
    TRY(open_program(path, &file, &hold));
    Errno e = load_file(file, args, out_space, pc, sp);
    if (file.object)
        vm::vmobject_drop(file.object); // the regions hold what they map
    return e;
}

const char* basename(const char* path)
{
    const char* slash = nullptr;
    for (const char* p = path; *p; ++p)
        if (*p == '/')
            slash = p;
    return slash ? slash + 1 : path;
}

// Records the program's name (its path's last part), path and arguments.
void set_name(Process* p, const char* path, const char* const* argv)
{
    const char* b = basename(path);
    size_t n = strnlen(b, sizeof p->name - 1);
    memcpy(p->name, b, n);
    p->name[n] = '\0';
    // The file itself, links resolved (a program run as /proc/self/exe
    // must not show that link as its own exe); as given if that fails.
    if (!sys::vfs_real_path(path, p->exe, sizeof p->exe))
        lib::snformat(p->exe, sizeof p->exe, "%s", path);
    p->cmdline_length = 0;
    for (size_t i = 0; argv && argv[i]; ++i) {
        size_t length = strlen(argv[i]) + 1;
        if (p->cmdline_length + length > sizeof p->cmdline)
            break;
        memcpy(p->cmdline + p->cmdline_length, argv[i], length);
        p->cmdline_length += length;
    }
}

// Gathers the arguments into the kernel and loads @p path with them.
Errno load_program(const char* path, const char* const* argv, const char* const* envp,
                   vm::VmSpace** space, uintptr_t* pc, uintptr_t* sp)
{
    ArgBlock* block = make_unzeroed<ArgBlock>(); // 64 KB, written before it is read
    if (!block)
        return k_enomem;
    auto gather = [&](const char* const* from, const char** to, size_t& count) {
        for (; from && from[count]; ++count)
            if (count == k_max_args || !add_string(*block, from[count], &to[count]))
                return false;
        return true;
    };
    Errno e = gather(argv, block->argv, block->argc) && gather(envp, block->envp, block->envc)
                  ? load(path, *block, space, pc, sp)
                  : k_e2big;
    destroy(block);
    return e;
}

} // namespace

uintptr_t signal_trampoline_address()
{
    // The page below the stack: above every segment exec loads (parse
    // keeps them below it), and taken before any mmap looks for a hole.
    return arch::user_space_limit() - vm::k_user_stack_size - arch::k_page_size;
}

Errno exec(const char* path, const char* const* argv, const char* const* envp)
{
    vm::VmSpace* space;
    uintptr_t pc, sp;
    TRY(load_program(path, argv, envp, &space, &pc, &sp));
    // The point of no return: the other threads go, and so does the old
    // program's clear-child-tid word (cleared in the memory that stays, if
    // another process shares it: a vfork parent).
    if (Errno e = exec_kill_other_threads(); e != k_ok) {
        vm::vmspace_destroy(space);
        return e;
    }
    Process* p = current_process();
    clear_child_tid(*current(), p->vm);
    vm::VmSpace* old = p->vm;
    {
        // Under the table's lock, as /proc reads another process's space.
        SpinGuard g(process_table_lock());
        p->vm = space;
    }
    arch::pmap_activate(space->pmap);
    vm_drop(old);
    vfork_release(*p); // a vfork parent has its address space to itself again
    set_name(p, path, argv);
    p->execed = true;
    signals_exec_reset(*p, *current());
    sys::fd_close_on_exec(p);
    arch::frame_reset_user(current()->context, *current()->frame, pc, sp);
    g_execs.add();
    return k_ok;
}

Result<int> spawn(const char* path, const char* const* argv)
{
    Process* p = nullptr;
    Thread* t = thread_alloc("user");
    if (!t)
        return k_enomem;
    static const char* const k_env[] = {"PATH=/bin", "HOME=/", "TERM=dumb", nullptr};
    vm::VmSpace* space;
    uintptr_t pc, sp;
    if (Errno e = load_program(path, argv, k_env, &space, &pc, &sp); e != k_ok) {
        thread_free(t);
        return e;
    }
    Result<Process*> made = make_process_for_spawn(t, space);
    if (!made) {
        vm::vmspace_destroy(space);
        thread_free(t);
        return made.error();
    }
    p = made.value();
    set_name(p, path, argv);
    memcpy(t->name, p->name, sizeof t->name);
    // Descriptors 0, 1 and 2: the console, one reference each (console_open's
    // own reference goes when `console` does).
    if (sys::FileRef console{sys::console_open()}) {
        for (int fd = 0; fd < 3; ++fd)
            p->files[fd] = sys::file_share(console.get());
    }
    t->frame = arch::context_init_user(t->context, t->kstack_top, pc, sp);
    g_execs.add();
    make_runnable(t);
    return p->pid;
}

} // namespace toll::proc
