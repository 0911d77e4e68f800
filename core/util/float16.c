#include "core/util/float16.h"

#include <string.h>

uint16_t xg_f16_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu;
    uint32_t man = x & 0x7fffffu;

    if (exp == 0xff) { /* Inf or NaN */
        if (man == 0) return sign | 0x7c00u;
        uint16_t m = (uint16_t)(man >> 13);
        return sign | 0x7c00u | 0x0200u | m; /* quiet NaN, keep top payload bits */
    }
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 0x1f) return sign | 0x7c00u; /* overflow -> Inf */
    if (e <= 0) {
        /* subnormal or zero in half precision */
        if (e < -10) return sign; /* too small even after rounding (below half of min subnormal) */
        man |= 0x800000u;         /* implicit bit */
        uint32_t shift = (uint32_t)(14 - e); /* 24-bit mantissa -> 10-bit subnormal */
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) half++;
        return sign | (uint16_t)half; /* may carry into exponent 1: still correct */
    }
    uint32_t half = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u)))
        half++; /* may carry into exponent; reaching 0x7c00 is the correct overflow to Inf */
    return sign | (uint16_t)half;
}

float xg_f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t x;
    if (exp == 0) {
        if (man == 0) {
            x = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 0x1f) {
        x = sign | 0x7f800000u | (man << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}
