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

extern uint32_t hs_stack[];

#define HS_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define HS_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define HS_SYST_CVR (*(volatile uint32_t *)0xE000E018u)

/* SysTick counts down from 2^24 - 1 at the processor clock, no interrupt: restart it before what
 * is timed, read it after; -1 if it wrapped (COUNTFLAG), i.e. more than 2^24 ticks went by. */
static inline void hs_ticks_start(void)
{
    HS_SYST_CSR = 0;
    HS_SYST_RVR = 0xFFFFFFu;
    HS_SYST_CVR = 0;
    HS_SYST_CSR = 5u; /* enable, processor clock */
    (void)HS_SYST_CSR; /* reading clears COUNTFLAG */
}

static inline int32_t hs_ticks(void)
{
    const uint32_t v = HS_SYST_CVR;
    return (HS_SYST_CSR & 0x10000u) ? -1 : (int32_t)(0xFFFFFFu - v);
}
#endif
