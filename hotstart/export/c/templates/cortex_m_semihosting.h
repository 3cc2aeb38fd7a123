/* Output and exit through Arm semihosting, and SysTick time (see cortex_m_startup.c). */
#ifndef HS_CORTEX_M_SEMIHOSTING_H
#define HS_CORTEX_M_SEMIHOSTING_H
#include <stdint.h>

#ifndef HS_STACK_BYTES
#define HS_STACK_BYTES 2048
#endif
#define HS_STACK_WORDS (HS_STACK_BYTES / 4)

void hs_write(const char *s);
void hs_write_int(int32_t v);
void hs_exit(int ok);

extern volatile uint32_t hs_systick_wraps;
extern uint32_t hs_stack[];

#define HS_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define HS_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define HS_SYST_CVR (*(volatile uint32_t *)0xE000E018u)

/* SysTick counts down from 2^24 - 1 at the processor clock; the interrupt counts the wraps. */
static inline void hs_ticks_start(void)
{
    HS_SYST_RVR = 0xFFFFFFu;
    HS_SYST_CVR = 0;
    hs_systick_wraps = 0;
    HS_SYST_CSR = 7u; /* enable, interrupt, processor clock */
}

static inline uint64_t hs_ticks(void)
{
    uint32_t w, v;
    do {
        w = hs_systick_wraps;
        v = HS_SYST_CVR;
    } while (w != hs_systick_wraps);
    return (uint64_t)w * 0x1000000u + (0xFFFFFFu - v);
}
#endif
