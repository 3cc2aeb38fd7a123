/* Runs a hotstart C export on the images of hotstart_test_images.h and prints, per image,
 *   label logit_0 ... logit_{n-1}
 * then "ticks N" (SysTick ticks per inference, averaged), "calibration T" (ticks for 1,000,000
 * iterations of a 2-instruction loop, to turn ticks into instructions under qemu -icount), and
 * "stack B" (bytes of stack used, from a painted stack). */
#include <stdint.h>

#include "@MODEL_H@"
#include "cortex_m_semihosting.h"
#include "hotstart_test_images.h"

#define HS_PAINT 0xA5A5A5A5u

static uint32_t stack_used(void)
{
    uint32_t i = 0;
    while (hs_stack[i] == HS_PAINT)
        ++i;
    return (uint32_t)((HS_STACK_WORDS - i) * 4u);
}

int main(void)
{
    int8_t logits[HOTSTART_NUM_CLASSES];
    { /* paint the stack below the current frame */
        uint32_t here;
        for (uint32_t *p = hs_stack; p < &here - 16; ++p)
            *p = HS_PAINT;
    }
    hs_ticks_start();
    uint64_t total = 0;
    for (int n = 0; n < HS_TEST_IMAGES; ++n) {
        const uint64_t t0 = hs_ticks();
        const int label = hotstart_predict(hs_test_images[n], logits);
        total += hs_ticks() - t0;
        hs_write_int(label);
        for (int i = 0; i < HOTSTART_NUM_CLASSES; ++i) {
            hs_write(" ");
            hs_write_int(logits[i]);
        }
        hs_write("\n");
    }
    hs_write("ticks ");
    hs_write_int((int32_t)(total / HS_TEST_IMAGES));
    const uint64_t c0 = hs_ticks();
    uint32_t k = 1000000u;
    __asm__ volatile("1: subs %0, %0, #1\n bne 1b" : "+r"(k) : : "cc");
    hs_write("\ncalibration ");
    hs_write_int((int32_t)(hs_ticks() - c0));
    hs_write("\nstack ");
    hs_write_int((int32_t)stack_used());
    hs_write("\n");
    return 0;
}
