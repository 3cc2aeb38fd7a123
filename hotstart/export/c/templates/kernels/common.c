/* Requantization with one rounding, as CMSIS-NN's CMSIS_NN_USE_SINGLE_ROUNDING: acc * mult / 2^shift
 * in 64 bits, but rounded half to even, as onnxruntime rounds (and not half up): averages over
 * 2 x 2 windows land exactly on halves often, and a different tie rule there grows through the
 * layers after it. `>>` of a negative int64 is an arithmetic shift on gcc, clang and the Arm
 * compilers (C99 leaves it to the implementation). */
static int32_t hs_requant(int32_t acc, int32_t mult, int shift)
{
    const int64_t p = (int64_t)acc * mult;
    const int64_t q = p >> shift, half = (int64_t)1 << (shift - 1);
    const int64_t rem = p - q * ((int64_t)1 << shift); /* 0 <= rem < 2^shift */
    return (int32_t)(q + (rem > half || (rem == half && (q & 1))));
}

static int8_t hs_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return (int8_t)(v < lo ? lo : (v > hi ? hi : v));
}

static int hs_argmax(const int8_t *v, int n)
{
    int best = 0;
    for (int i = 1; i < n; ++i)
        if (v[i] > v[best])
            best = i;
    return best;
}
