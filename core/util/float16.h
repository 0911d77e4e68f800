/* IEEE 754 binary16 ("half", Float16) conversion.
 *
 * Used by the game-state draft (Float16 fields) and LESS (FLOAT16). Conversion from float rounds to
 * nearest, ties to even; overflow gives ±Inf, NaN stays NaN (quiet, payload's top bits kept),
 * values below the smallest subnormal round to ±0; subnormals are exact where representable. */
#ifndef XG_FLOAT16_H
#define XG_FLOAT16_H

#include <stdint.h>

/** Convert a float to binary16 bits, round-to-nearest-even. */
uint16_t xg_f16_from_float(float f);

/** Convert binary16 bits to float (exact). */
float xg_f16_to_float(uint16_t h);

#endif
