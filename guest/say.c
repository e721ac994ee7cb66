/* say.c: PID 1's console messages (guest/say.h). */
#include "guest/say.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool say_verbose;

void say(const char *fmt, ...)
{
	char line[512];
	int len = snprintf(line, sizeof(line), "ringvm-init: ");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line + len, sizeof(line) - (size_t)len - 1, fmt, ap);
	va_end(ap);
	len = (int)strlen(line);
	line[len++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)len) < 0) {
		/* Nowhere left to report it. */
	}
}
