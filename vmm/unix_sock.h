/* unix_sock.h: a listening Unix socket at a path, and its directory, to remove it once confined. */
#ifndef RINGVM_UNIX_SOCK_H
#define RINGVM_UNIX_SOCK_H

#include <stddef.h>

/*
 * Listen (backlog 1, close-on-exec) on a Unix stream socket at path. A socket file nobody listens
 * on any more (a previous ringvm that was killed) is replaced; a live one, any other kind of file,
 * an empty or too long path are refused. Errors name the socket as what and path run together
 * ("--socket " "/run/x.sock"). The fd, or -errno with a one-line err.
 */
__attribute__((warn_unused_result)) int unix_listen(const char *what, const char *path, char *err,
						    size_t errlen);

/*
 * The directory of the socket at path (one unix_listen accepted), O_PATH, and in *name the
 * socket's name in it (a pointer into path): a confined thread removes the file with
 * unlinkat(fd, *name, 0), the one unlinkat its seccomp role allows. The fd or -errno.
 */
__attribute__((warn_unused_result)) int unix_sock_dir(const char *path, const char **name);

#endif
