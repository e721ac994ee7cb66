/* main.c: the attack payload's entry: run the case named by attack=NAME on the command line. */
#include "firmware/attack/cases.h"
#include "firmware/attack/rt.h"

void rt_init(uint64_t start_info);
void attack_main(uint64_t start_info);

static const struct attack_case cases[] = {
#define ATTACK_CASE(name, ...) { #name, case_##name },
#include "firmware/attack/cases.def"
#undef ATTACK_CASE
};

void attack_main(uint64_t start_info)
{
	char name[64];
	rt_init(start_info);
	if (!rt_cmdline_get("attack", name, sizeof(name)))
		name[0] = 0;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strncmp(cases[i].name, name, sizeof(name)) == 0) {
			rt_case = cases[i].name;
			cases[i].run();
			rt_puts("attack: PASS ");
			rt_puts(rt_case);
			rt_puts("\n");
			rt_exit(ATTACK_PASS);
		}
	}
	rt_puts("attack: unknown case '");
	rt_puts(name);
	rt_puts("'; cases:");
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rt_puts(" ");
		rt_puts(cases[i].name);
	}
	rt_puts("\n");
	rt_exit(ATTACK_UNKNOWN);
}
