/* say.h: PID 1's messages on the console, one "ringvm-init: ..." line each. */
#ifndef RINGVM_GUEST_SAY_H
#define RINGVM_GUEST_SAY_H

#include <stdbool.h>

/* ringvm.verbose=1: PID 1 narrates what it does. Set once by main() before anything is said. */
extern bool say_verbose;

/* One line on fd 2 (the console), written in one write() so that lines never interleave. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A line only under ringvm.verbose=1. */
#define say_info(...)                     \
	do {                              \
		if (say_verbose)          \
			say(__VA_ARGS__); \
	} while (0)

#endif
