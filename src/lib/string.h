// Freestanding C string and memory functions, shared by the kernel and the
// host tests. The compiler may emit calls to memcpy/memset on its own.
#pragma once
#include <stddef.h>

// The host tests link these under toll_-prefixed names so that they do not
// replace the C library of the test program itself.
#ifdef TOLL_HOST_TEST
#define TOLL_C_NAME(name) toll_##name
#include <cstring> // kernel sources compiled into the host tests use the host's
#else
#define TOLL_C_NAME(name) name
#endif

extern "C" {
void* TOLL_C_NAME(memcpy)(void* dst, const void* src, size_t n);
void* TOLL_C_NAME(memmove)(void* dst, const void* src, size_t n);
void* TOLL_C_NAME(memset)(void* dst, int value, size_t n);
int TOLL_C_NAME(memcmp)(const void* a, const void* b, size_t n);
size_t TOLL_C_NAME(strlen)(const char* s);
size_t TOLL_C_NAME(strnlen)(const char* s, size_t max);
int TOLL_C_NAME(strcmp)(const char* a, const char* b);
int TOLL_C_NAME(strncmp)(const char* a, const char* b, size_t n);
const char* TOLL_C_NAME(strchr)(const char* s, int c);
}
