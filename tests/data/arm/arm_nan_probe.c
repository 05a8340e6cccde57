/* Prints what an AArch64 implementation gives for NaN and special operands,
   with FPCR.DN = 0 and 1: the result bits and FPSR's invalid-operation flag.
   Run under QEMU's user-mode emulator by regenerate.sh; the committed output
   (arm_nan_qemu.csv) is what tests/arith/test_nan_conventions_arm.cpp checks
   fmtcheck's --nan arm (DN = 0) and arm-dn (DN = 1) against.

   Every operation is one instruction in inline asm, so the compiler neither
   folds nor reorders it around the FPCR write. FPCR's other fields stay 0:
   round to nearest even, no flush to zero, IEEE half precision (AHP = 0).

   Output, one line an operation: op,dn,a,b,c,result,invalid
     op      cvt_f32_f16 cvt_f16_f32 cvt_f32_f64 cvt_f64_f32 (fcvt),
             cvt_f32_bf16 (bfcvt), {add,sub,mul,div,fma,sqrt}_{f32,f16}
             (fadd, fsub, fmul, fdiv, fmadd, fsqrt; fma is a * b + c)
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

/* Each operation: the operands' bits into d0, d1, d2 (so the low 32 bits
   are s0..s2 and the low 16 h0..h2), one instruction writing v0, and d0
   back; a scalar write zeroes the rest of the register, so d0 holds just
   the result's bits. h registers need FEAT_FP16, bfcvt FEAT_BF16. */
#define UNARY(name, insn)                                                                              \
  static uint64_t name(uint64_t a) {                                                                   \
    uint64_t r;                                                                                        \
    __asm__ volatile("fmov d0, %1\n\t" insn "\n\tfmov %0, d0" : "=r"(r) : "r"(a) : "v0", "memory");    \
    return r;                                                                                          \
  }
#define BINARY(name, insn)                                                                             \
  static uint64_t name(uint64_t a, uint64_t b) {                                                       \
    uint64_t r;                                                                                        \
    __asm__ volatile("fmov d0, %1\n\tfmov d1, %2\n\t" insn "\n\tfmov %0, d0"                           \
                     : "=r"(r) : "r"(a), "r"(b) : "v0", "v1", "memory");                               \
    return r;                                                                                          \
  }
#define TERNARY(name, insn)                                                                            \
  static uint64_t name(uint64_t a, uint64_t b, uint64_t c) {                                           \
    uint64_t r;                                                                                        \
    __asm__ volatile("fmov d0, %1\n\tfmov d1, %2\n\tfmov d2, %3\n\t" insn "\n\tfmov %0, d0"            \
                     : "=r"(r) : "r"(a), "r"(b), "r"(c) : "v0", "v1", "v2", "memory");                 \
    return r;                                                                                          \
  }
UNARY(cvt_f32_f16, "fcvt h0, s0")
UNARY(cvt_f32_bf16, "bfcvt h0, s0")
UNARY(cvt_f16_f32, "fcvt s0, h0")
UNARY(cvt_f32_f64, "fcvt d0, s0")
UNARY(cvt_f64_f32, "fcvt s0, d0")
UNARY(sqrt_f32, "fsqrt s0, s0")
UNARY(sqrt_f16, "fsqrt h0, h0")
BINARY(add_f32, "fadd s0, s0, s1")
BINARY(sub_f32, "fsub s0, s0, s1")
BINARY(mul_f32, "fmul s0, s0, s1")
BINARY(div_f32, "fdiv s0, s0, s1")
BINARY(add_f16, "fadd h0, h0, h1")
BINARY(sub_f16, "fsub h0, h0, h1")
BINARY(mul_f16, "fmul h0, h0, h1")
BINARY(div_f16, "fdiv h0, h0, h1")
TERNARY(fma_f32, "fmadd s0, s0, s1, s2")
TERNARY(fma_f16, "fmadd h0, h0, h1, h2")

/* Operands of the arithmetic: quiet and signaling NaNs of both signs, with
   no payload, a small one, a large one; the operands of invalid operations
   (infinities, zeros); ordinary numbers. fma takes the first kFmaOps of
   each list in every position (12^3 triples, 0 * inf + NaN among them). */
static const uint32_t kOps32[] = {0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFE00001, 0x7F800001, 0xFF812345,
                                  0x7FA00000, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x3F800000,
                                  0x7FFFFFFF, 0xBF800000, 0x7F7FFFFF, 0x00000001};
static const uint32_t kOps16[] = {0x7E00, 0xFE00, 0x7E09, 0xFE01, 0x7C01, 0xFC05, 0x7D00, 0x7C00,
                                  0xFC00, 0x0000, 0x8000, 0x3C00, 0x7FFF, 0xBC00, 0x7BFF, 0x0001};
/* The conversions take the operands from kConvertedFrom on (infinities,
   zeros, numbers, 0x7FFFFFFF); the NaNs before it are among their own. */
enum { kConvertedFrom = 7, kFmaOps = 12 };
#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

/* One line; FPSR is read first, before printf can touch it. */
static void row(const char* op, int dn, int n, const uint64_t in[3], int in_digits, uint64_t result,
                int result_digits) {
  const int invalid = invalid_raised();
  printf("%s,%d", op, dn);
  for (int i = 0; i < 3; ++i) {
    if (i < n) printf(",%0*llx", in_digits, (unsigned long long)in[i]); else printf(",-");
  }
  printf(",%0*llx,%d\n", result_digits, (unsigned long long)result, invalid);
}
#define ROW1(op, digits, result_digits, x)                  \
  do {                                                      \
    const uint64_t in_[3] = {(x), 0, 0};                    \
    clear_fpsr();                                           \
    const uint64_t r_ = op(x);                              \
    row(#op, dn, 1, in_, digits, r_, result_digits);        \
  } while (0)
#define ROW2(op, digits, x, y)                              \
  do {                                                      \
    const uint64_t in_[3] = {(x), (y), 0};                  \
    clear_fpsr();                                           \
    const uint64_t r_ = op(x, y);                           \
    row(#op, dn, 2, in_, digits, r_, digits);               \
  } while (0)
#define ROW3(op, digits, x, y, z)                           \
  do {                                                      \
    const uint64_t in_[3] = {(x), (y), (z)};                \
    clear_fpsr();                                           \
    const uint64_t r_ = op(x, y, z);                        \
    row(#op, dn, 3, in_, digits, r_, digits);               \
  } while (0)

int main(void) {
  printf("op,dn,a,b,c,result,invalid\n");
  for (int dn = 0; dn <= 1; ++dn) {
    set_fpcr(dn ? FPCR_DN : 0);
    /* float32 NaNs into fp16, bfloat16 and float64: every single payload
       bit, and a few patterns, quiet and signaling, both signs; then the
       non-NaN operands. */
    const uint32_t patterns32[] = {0x3FFFFF, 0x2AAAAA, 0x155555, 0x001FFF, 0x002000, 0x3FE000, 0x00FFFF, 0x010000};
    for (uint32_t sign = 0; sign <= 1; ++sign) {
      for (uint32_t quiet = 0; quiet <= 1; ++quiet) {
        for (int i = -1; i < 22 + (int)COUNT(patterns32); ++i) {
          if (i < 0 && !quiet) continue;  /* fraction 0 is infinity */
          const uint32_t payload = i < 0 ? 0 : i < 22 ? 1u << i : patterns32[i - 22];
          const uint32_t x = sign << 31 | 0x7F800000u | quiet << 22 | payload;
          ROW1(cvt_f32_f16, 8, 4, x);
          ROW1(cvt_f32_bf16, 8, 4, x);
          ROW1(cvt_f32_f64, 8, 16, x);
        }
      }
    }
    for (unsigned i = kConvertedFrom; i < COUNT(kOps32); ++i) {
      ROW1(cvt_f32_f16, 8, 4, kOps32[i]);
      ROW1(cvt_f32_bf16, 8, 4, kOps32[i]);
      ROW1(cvt_f32_f64, 8, 16, kOps32[i]);
    }
    /* float64 NaNs into float32 the same way (51 payload bits), then
       infinity, zero, one, the largest double, the smallest subnormal. */
    const uint64_t patterns64[] = {0x7FFFFFFFFFFFFull, 0x5555555555555ull, 0x000001FFFFFFFull, 0x0000020000000ull,
                                   0x7FFFFE0000000ull};
    for (uint64_t sign = 0; sign <= 1; ++sign) {
      for (uint64_t quiet = 0; quiet <= 1; ++quiet) {
        for (int i = -1; i < 51 + (int)COUNT(patterns64); ++i) {
          if (i < 0 && !quiet) continue;
          const uint64_t payload = i < 0 ? 0 : i < 51 ? 1ull << i : patterns64[i - 51];
          const uint64_t x = sign << 63 | 0x7FF0000000000000ull | quiet << 51 | payload;
          ROW1(cvt_f64_f32, 16, 8, x);
        }
      }
    }
    const uint64_t specials64[] = {0x7FF0000000000000ull, 0xFFF0000000000000ull, 0, 0x8000000000000000ull,
                                   0x3FF0000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0x0000000000000001ull};
    for (unsigned i = 0; i < COUNT(specials64); ++i) ROW1(cvt_f64_f32, 16, 8, specials64[i]);
    /* Every fp16 NaN code into float32, then the non-NaN operands. */
    for (uint32_t x = 0; x <= 0xFFFF; ++x) {
      if ((x & 0x7C00) != 0x7C00 || (x & 0x3FF) == 0) continue;
      ROW1(cvt_f16_f32, 4, 8, x);
    }
    for (unsigned i = kConvertedFrom; i < COUNT(kOps16); ++i) ROW1(cvt_f16_f32, 4, 8, kOps16[i]);
    /* Every operand, pair and triple (each operand position NaN, 0 * inf + NaN). */
    for (unsigned i = 0; i < COUNT(kOps32); ++i) {
      ROW1(sqrt_f32, 8, 8, kOps32[i]);
      ROW1(sqrt_f16, 4, 4, kOps16[i]);
      for (unsigned j = 0; j < COUNT(kOps32); ++j) {
        ROW2(add_f32, 8, kOps32[i], kOps32[j]);
        ROW2(sub_f32, 8, kOps32[i], kOps32[j]);
        ROW2(mul_f32, 8, kOps32[i], kOps32[j]);
        ROW2(div_f32, 8, kOps32[i], kOps32[j]);
        ROW2(add_f16, 4, kOps16[i], kOps16[j]);
        ROW2(sub_f16, 4, kOps16[i], kOps16[j]);
        ROW2(mul_f16, 4, kOps16[i], kOps16[j]);
        ROW2(div_f16, 4, kOps16[i], kOps16[j]);
        if (i >= kFmaOps || j >= kFmaOps) continue;
        for (unsigned k = 0; k < kFmaOps; ++k) {
          ROW3(fma_f32, 8, kOps32[i], kOps32[j], kOps32[k]);
          ROW3(fma_f16, 4, kOps16[i], kOps16[j], kOps16[k]);
        }
      }
    }
  }
  set_fpcr(0);
  return 0;
}
