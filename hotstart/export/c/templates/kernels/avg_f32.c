/* onnxruntime averages a pooling window in float32: it dequantizes each value (float(x - zp) * s_x),
 * adds them one by one, divides by the count, divides by s_y and rounds. At an exact tie (a 2 x 2
 * window whose sum is 2 mod 4, when s_x == s_y: common) its float rounding noise decides the
 * result, and a one-step difference there grows through the layers after it. So the C does the
 * same float32 arithmetic, emulated exactly in 64-bit integers (no float in the code): a value is
 * sign * m * 2^e, and each operation rounds m to 24 significant bits, half to even. */
static int hs_bitlen(uint64_t v)
{
    int n = 0;
    while (v) {
        ++n;
        v >>= 1;
    }
    return n;
}

/* m * 2^*e rounded to 24 significant bits, half to even; `sticky`: nonzero bits were cut below m. */
static uint64_t hs_round24(uint64_t m, int *e, int sticky)
{
    const int n = hs_bitlen(m);
    if (n <= 24)
        return m;
    const int s = n - 24;
    uint64_t q = m >> s;
    const uint64_t rem = m & (((uint64_t)1 << s) - 1), half = (uint64_t)1 << (s - 1);
    if (rem > half || (rem == half && (sticky || (q & 1))))
        ++q;
    *e += s;
    if (q >> 24) { /* rounded up to 2^24: exact with one bit less */
        q >>= 1;
        *e += 1;
    }
    return q;
}

/* (m * 2^e) / d for d > 0, rounded to 24 significant bits; m > 0. */
static uint64_t hs_div24(uint64_t m, int *e, uint64_t d)
{
    const int up = 62 - hs_bitlen(m);
    m <<= up;
    *e -= up;
    const uint64_t q = m / d;
    return hs_round24(q, e, m % d != 0);
}

/* deq[v + 128] = float32(v - x_zero) * s_x as an integer times 2^e0; s_y = ym * 2^ye. */
static int32_t hs_avg_f32(const int8_t *x, int iw, int ya, int yb, int xa, int xb, int n,
                          const int64_t *deq, int e0, uint32_t ym, int ye)
{
    int neg = 0, e = e0;
    uint64_t m = 0;
    for (int iy = ya; iy < yb; ++iy)
        for (int ix = xa; ix < xb; ++ix) {
            const int64_t a = (int64_t)(m << (e - e0)), s = (neg ? -a : a) + deq[x[iy * iw + ix] + 128];
            neg = s < 0;
            m = (uint64_t)(neg ? -s : s);
            e = e0;
            m = hs_round24(m, &e, 0);
        }
    if (m == 0)
        return 0;
    m = hs_div24(m, &e, (uint64_t)n); /* acc / count */
    m = hs_div24(m, &e, ym);          /* / s_y */
    e -= ye;
    int32_t r;
    if (e >= 0) { /* m has 24 bits: at least 2^23, far outside int8, saturated by the caller */
        r = 0x7FFFFFFF;
    } else if (-e > 40) {
        r = 0;
    } else { /* to an integer, half to even */
        const int s = -e;
        uint64_t q = m >> s;
        const uint64_t rem = m & (((uint64_t)1 << s) - 1), half = (uint64_t)1 << (s - 1);
        q += rem > half || (rem == half && (q & 1));
        r = (int32_t)q;
    }
    return neg ? -r : r;
}
