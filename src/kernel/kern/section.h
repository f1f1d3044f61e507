// Linker-section registries: tables built by the linker from objects that
// declare themselves, with no constructor and no central list to edit.
#pragma once

/// Places an object in the named registry section. The linker provides
/// __start_<name> and __stop_<name> around all such objects.
#define TOLL_IN_SECTION(name) __attribute__((section(#name), used, aligned(sizeof(void*))))

/// Declares the bounds of registry @p name holding objects of @p type.
#define TOLL_SECTION_BOUNDS(type, name)                                                            \
    extern "C" type __start_##name[];                                                              \
    extern "C" type __stop_##name[]
