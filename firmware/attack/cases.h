/* cases.h: every attack case, declared from cases.def (one line per case: name, what it does). */
#ifndef ATTACK_CASES_H
#define ATTACK_CASES_H

struct attack_case {
	const char *name;
	void (*run)(void); /* returns when every check held; a failed check exits ATTACK_FAIL */
};

#define ATTACK_CASE(name, ...) void case_##name(void);
#include "firmware/attack/cases.def"
#undef ATTACK_CASE

#endif
