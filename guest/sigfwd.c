/* sigfwd.c: the signal port's one-byte codec, and PID 1's delivery to the command's process group. */
#include "guest/sigfwd.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

int sigfwd_encode(int sig)
{
	return sig == SIGHUP || sig == SIGINT || sig == SIGTERM ? sig : -EINVAL;
}

int sigfwd_decode(unsigned char byte)
{
	return sigfwd_encode(byte);
}

int sigfwd_deliver(int fd, pid_t pgrp)
{
	unsigned char buf[64];
	int sent = 0;

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return sent;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		for (ssize_t i = 0; i < n; i++) {
			int sig = sigfwd_decode(buf[i]);

			/* pgrp <= 1 would be "every process" or ourselves: never. */
			if (sig < 0 || pgrp <= 1)
				continue;
			if (kill(-pgrp, sig) == 0)
				sent++;
			else if (errno != ESRCH)
				return -errno;
		}
	}
}
