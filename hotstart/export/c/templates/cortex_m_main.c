/* Runs a hotstart C export on the images of hotstart_test_images.h and prints, per image,
 *   label logit_0 ... logit_{n-1}
 * then "ticks N" (SysTick ticks per inference, averaged; -1 past 2^24 ticks), "calibration T"
 * (ticks for 1,000,000 iterations of a 2-instruction loop: under qemu -icount, where time counts
 * instructions, 2,000,000 / T instructions per tick), and "stack B" (bytes of stack used, from a
 * painted stack). */
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
        uintptr_t sp;
        __asm__ volatile("mov %0, sp" : "=r"(sp));
        for (uint32_t *p = hs_stack; (uintptr_t)(p + 16) < sp; ++p)
            *p = HS_PAINT;
    }
    int32_t total = 0;
    for (int n = 0; n < HS_TEST_IMAGES; ++n) {
        hs_ticks_start();
        const int label = hotstart_predict(hs_test_images[n], logits);
        const int32_t t = hs_ticks();
        total = (total < 0 || t < 0) ? -1 : total + t;
        hs_write_int(label);
        for (int i = 0; i < HOTSTART_NUM_CLASSES; ++i) {
            hs_write(" ");
            hs_write_int(logits[i]);
        }
        hs_write("\n");
    }
    hs_write("ticks ");
    hs_write_int(total < 0 ? -1 : total / HS_TEST_IMAGES);
    hs_ticks_start();
    uint32_t k = 1000000u;
    __asm__ volatile("1: subs %0, %0, #1\n bne 1b" : "+r"(k) : : "cc");
    const int32_t calibration = hs_ticks();
    hs_write("\ncalibration ");
    hs_write_int(calibration);
    hs_write("\nstack ");
    hs_write_int((int32_t)stack_used());
    hs_write("\n");
    return 0;
}
