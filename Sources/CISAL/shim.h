#ifndef EVENTGRAPH_CISAL_SHIM_H
#define EVENTGRAPH_CISAL_SHIM_H
#include <isa-l/crc.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// CRC-32C of short inputs (the projections' keys and values, a few to a few hundred bytes)
// with the processor's CRC32 instruction, inline: ISA-L's crc32_iscsi is made for long
// buffers, and its dispatch and set-up cost more than the work on an 8-byte key. The same
// polynomial and bit order as crc32_iscsi (it continues a CRC crc32_iscsi began, and the
// reverse). Callers use it only when eventgraph_cpu_has_crc32c() said so; elsewhere, and
// for long inputs, crc32_iscsi.

/// The longest input (key or value) checksummed by the instruction inline.
#define EVENTGRAPH_CRC32C_SHORT 256

#if defined(__x86_64__)
#include <cpuid.h>

/// Whether the processor has SSE 4.2's CRC32 instruction (CPUID leaf 1, ECX bit 20).
static inline int eventgraph_cpu_has_crc32c(void) {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  return (ecx & bit_SSE4_2) != 0;
}

/// Continues `crc` (not inverted: crc32_iscsi's convention) over `n` bytes at `p`.
__attribute__((target("sse4.2")))
static inline uint32_t eventgraph_crc32c_short(uint32_t crc, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    memcpy(&word, b, 8);  // unaligned load, little-endian as the instruction expects
    c = __builtin_ia32_crc32di(c, word);
    b += 8;
    n -= 8;
  }
  uint32_t c32 = (uint32_t)c;
  while (n > 0) {
    c32 = __builtin_ia32_crc32qi(c32, *b);
    b += 1;
    n -= 1;
  }
  return c32;
}
#else
static inline int eventgraph_cpu_has_crc32c(void) { return 0; }
static inline uint32_t eventgraph_crc32c_short(uint32_t crc, const void *p, size_t n) {
  return crc32_iscsi((unsigned char *)p, (int)n, crc);
}
#endif

/// Continues `crc` over `n` bytes by ISA-L, in pieces its `int` length can hold.
static inline uint32_t eventgraph_crc32c_long(uint32_t crc, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  while (n > 0) {
    size_t piece = n < ((size_t)1 << 30) ? n : ((size_t)1 << 30);
    crc = crc32_iscsi((unsigned char *)b, (int)piece, crc);  // read only: `const` lacks in the header
    b += piece;
    n -= piece;
  }
  return crc;
}

/// The CRC-32C of `a` followed by `b` (either may be empty), inverted as the standard
/// CRC-32C is: short inputs by the instruction, inline, long ones by ISA-L. Whether the
/// processor has the instruction is asked once and kept (a relaxed atomic: every thread
/// that asks finds the same answer).
static inline uint32_t eventgraph_crc32c_pair(const void *a, size_t na, const void *b, size_t nb) {
  static int known = -1;
  int has = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (has < 0) {
    has = eventgraph_cpu_has_crc32c();
    __atomic_store_n(&known, has, __ATOMIC_RELAXED);
  }
  uint32_t crc = 0xFFFFFFFFu;
  if (has && na <= EVENTGRAPH_CRC32C_SHORT && nb <= EVENTGRAPH_CRC32C_SHORT) {
    crc = eventgraph_crc32c_short(crc, a, na);
    crc = eventgraph_crc32c_short(crc, b, nb);
  } else {
    crc = eventgraph_crc32c_long(crc, a, na);
    crc = eventgraph_crc32c_long(crc, b, nb);
  }
  return ~crc;
}

#endif
