/* Prints what an AArch64 implementation gives for NaN and special operands,
   with FPCR.DN = 0 and 1: the result bits and FPSR's invalid-operation flag.
   Run under QEMU's user-mode emulator by regenerate.sh; the committed output
   (arm_nan_qemu.csv) is what tests/arith/test_nan_conventions_arm.cpp checks
   fmtcheck's --nan arm (DN = 0) and arm-dn (DN = 1) against.

   Every operation is one instruction in inline asm, so the compiler neither
   folds nor reorders it around the FPCR write. FPCR's other fields stay 0:
   round to nearest even, no flush to zero, IEEE half precision (AHP = 0).

   Output, one line an operation: op,dn,a,b,c,result,invalid
     op      cvt_f32_f16  cvt_f16_f32  cvt_f32_f64  (fcvt)
             add_f32 mul_f32 fma_f32  add_f16 mul_f16 fma_f16
             (fadd, fmul, fmadd: fma is a * b + c)
     a,b,c   operand bits in hex, "-" where the operation has fewer
     result  result bits in hex; invalid 1 when FPSR.IOC was set. */
#include <stdint.h>
#include <stdio.h>

#define FPCR_DN (1ull << 25)

static void set_fpcr(uint64_t v) { __asm__ volatile("msr fpcr, %0" ::"r"(v) : "memory"); }
static void clear_fpsr(void) { __asm__ volatile("msr fpsr, xzr" ::: "memory"); }
static int invalid_raised(void) {
  uint64_t v;
  __asm__ volatile("mrs %0, fpsr" : "=r"(v)::"memory");
  return (int)(v & 1);  /* IOC */
}

static uint32_t cvt_f32_f16(uint32_t a) {
  uint16_t r;
  __asm__ volatile("fmov s0, %w1\n\tfcvt h0, s0\n\tumov %w0, v0.h[0]" : "=r"(r) : "r"(a) : "v0", "memory");
  return r;
}
static uint32_t cvt_f16_f32(uint32_t a) {
  uint32_t r;
  __asm__ volatile("dup v0.8h, %w1\n\tfcvt s0, h0\n\tfmov %w0, s0" : "=r"(r) : "r"(a) : "v0", "memory");
  return r;
}
static uint64_t cvt_f32_f64(uint32_t a) {
  uint64_t r;
  __asm__ volatile("fmov s0, %w1\n\tfcvt d0, s0\n\tfmov %0, d0" : "=r"(r) : "r"(a) : "v0", "memory");
  return r;
}
static uint32_t add_f32(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__ volatile("fmov s0, %w1\n\tfmov s1, %w2\n\tfadd s0, s0, s1\n\tfmov %w0, s0"
                   : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "memory");
  return r;
}
static uint32_t mul_f32(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__ volatile("fmov s0, %w1\n\tfmov s1, %w2\n\tfmul s0, s0, s1\n\tfmov %w0, s0"
                   : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "memory");
  return r;
}
static uint32_t fma_f32(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t r;
  __asm__ volatile("fmov s0, %w1\n\tfmov s1, %w2\n\tfmov s2, %w3\n\tfmadd s0, s0, s1, s2\n\tfmov %w0, s0"
                   : "=r"(r) : "r"(a), "r"(b), "r"(c) : "v0", "v1", "v2", "memory");
  return r;
}
/* fp16 arithmetic (FEAT_FP16, -march=armv8.2-a+fp16). */
static uint32_t add_f16(uint32_t a, uint32_t b) {
  uint16_t r;
  __asm__ volatile("dup v0.8h, %w1\n\tdup v1.8h, %w2\n\tfadd h0, h0, h1\n\tumov %w0, v0.h[0]"
                   : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "memory");
  return r;
}
static uint32_t mul_f16(uint32_t a, uint32_t b) {
  uint16_t r;
  __asm__ volatile("dup v0.8h, %w1\n\tdup v1.8h, %w2\n\tfmul h0, h0, h1\n\tumov %w0, v0.h[0]"
                   : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "memory");
  return r;
}
static uint32_t fma_f16(uint32_t a, uint32_t b, uint32_t c) {
  uint16_t r;
  __asm__ volatile("dup v0.8h, %w1\n\tdup v1.8h, %w2\n\tdup v2.8h, %w3\n\tfmadd h0, h0, h1, h2\n\tumov %w0, v0.h[0]"
                   : "=r"(r) : "r"(a), "r"(b), "r"(c) : "v0", "v1", "v2", "memory");
  return r;
}

/* Operands of the arithmetic: quiet and signaling NaNs of both signs, with
   no payload, a small one, a large one; the operands of invalid operations
   (infinities, zeros); ordinary numbers. fma takes the first kFmaOps of
   each list in every position (12^3 triples, 0 * inf + NaN among them). */
static const uint32_t kOps32[] = {0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFE00001, 0x7F800001, 0xFF812345,
                                  0x7FA00000, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x3F800000,
                                  0x7FFFFFFF, 0xBF800000, 0x7F7FFFFF, 0x00000001};
static const uint32_t kOps16[] = {0x7E00, 0xFE00, 0x7E09, 0xFE01, 0x7C01, 0xFC05, 0x7D00, 0x7C00,
                                  0xFC00, 0x0000, 0x8000, 0x3C00, 0x7FFF, 0xBC00, 0x7BFF, 0x0001};
enum { kFirstNonNan = 7, kFmaOps = 12 };
#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

/* One line; FPSR is read first, before printf can touch it. */
static void row(const char* op, int dn, int n, const uint32_t* in, int in_digits, uint64_t result, int result_digits) {
  const int invalid = invalid_raised();
  printf("%s,%d", op, dn);
  for (int i = 0; i < 3; ++i) {
    if (i < n) printf(",%0*x", in_digits, in[i]); else printf(",-");
  }
  printf(",%0*llx,%d\n", result_digits, (unsigned long long)result, invalid);
}

int main(void) {
  printf("op,dn,a,b,c,result,invalid\n");
  for (int dn = 0; dn <= 1; ++dn) {
    set_fpcr(dn ? FPCR_DN : 0);
    /* float32 NaNs into fp16 and float64: every single payload bit, and a
       few patterns, quiet and signaling, both signs; then non-NaN operands. */
    for (uint32_t sign = 0; sign <= 1; ++sign) {
      for (uint32_t quiet = 0; quiet <= 1; ++quiet) {
        uint32_t payloads[22 + 6];
        int n = 0;
        for (int bit = 0; bit < 22; ++bit) payloads[n++] = 1u << bit;
        const uint32_t patterns[] = {0x3FFFFF, 0x2AAAAA, 0x155555, 0x001FFF, 0x002000, 0x3FE000};
        for (unsigned i = 0; i < COUNT(patterns); ++i) payloads[n++] = patterns[i];
        for (int i = -1; i < n; ++i) {
          if (i < 0 && !quiet) continue;  /* fraction 0 is infinity */
          uint32_t x = sign << 31 | 0x7F800000u | quiet << 22 | (i < 0 ? 0 : payloads[i]);
          clear_fpsr(); row("cvt_f32_f16", dn, 1, &x, 8, cvt_f32_f16(x), 4);
          clear_fpsr(); row("cvt_f32_f64", dn, 1, &x, 8, cvt_f32_f64(x), 16);
        }
      }
    }
    for (unsigned i = kFirstNonNan; i < COUNT(kOps32); ++i) {
      clear_fpsr(); row("cvt_f32_f16", dn, 1, &kOps32[i], 8, cvt_f32_f16(kOps32[i]), 4);
      clear_fpsr(); row("cvt_f32_f64", dn, 1, &kOps32[i], 8, cvt_f32_f64(kOps32[i]), 16);
    }
    /* Every fp16 NaN code into float32, then the non-NaN operands. */
    for (uint32_t x = 0; x <= 0xFFFF; ++x) {
      if ((x & 0x7C00) != 0x7C00 || (x & 0x3FF) == 0) continue;
      clear_fpsr(); row("cvt_f16_f32", dn, 1, &x, 4, cvt_f16_f32(x), 8);
    }
    for (unsigned i = kFirstNonNan; i < COUNT(kOps16); ++i) {
      clear_fpsr(); row("cvt_f16_f32", dn, 1, &kOps16[i], 4, cvt_f16_f32(kOps16[i]), 8);
    }
    /* Every pair, every triple (each operand position NaN, 0 * inf + NaN). */
    for (unsigned i = 0; i < COUNT(kOps32); ++i) {
      for (unsigned j = 0; j < COUNT(kOps32); ++j) {
        const uint32_t in[3] = {kOps32[i], kOps32[j], 0};
        clear_fpsr(); row("add_f32", dn, 2, in, 8, add_f32(in[0], in[1]), 8);
        clear_fpsr(); row("mul_f32", dn, 2, in, 8, mul_f32(in[0], in[1]), 8);
        const uint32_t in16[3] = {kOps16[i], kOps16[j], 0};
        clear_fpsr(); row("add_f16", dn, 2, in16, 4, add_f16(in16[0], in16[1]), 4);
        clear_fpsr(); row("mul_f16", dn, 2, in16, 4, mul_f16(in16[0], in16[1]), 4);
        if (i >= kFmaOps || j >= kFmaOps) continue;
        for (unsigned k = 0; k < kFmaOps; ++k) {
          const uint32_t t[3] = {kOps32[i], kOps32[j], kOps32[k]};
          clear_fpsr(); row("fma_f32", dn, 3, t, 8, fma_f32(t[0], t[1], t[2]), 8);
          const uint32_t t16[3] = {kOps16[i], kOps16[j], kOps16[k]};
          clear_fpsr(); row("fma_f16", dn, 3, t16, 4, fma_f16(t16[0], t16[1], t16[2]), 4);
        }
      }
    }
  }
  set_fpcr(0);
  return 0;
}
