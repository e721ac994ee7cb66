/* unix_sock.c: a listening Unix socket at a path (a stale one replaced), and its directory. */
#define _GNU_SOURCE
#include "vmm/unix_sock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/errmsg.h"

int unix_listen(const char *what, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	/* Empty would bind an abstract name nobody could find by path. */
	if (!*path || strlen(path) >= sizeof(a.sun_path))
		return errmsg(err, errlen, -ENAMETOOLONG,
			      "%s%s: empty, or too long a path for a Unix socket (%zu bytes at most)", what,
			      path, sizeof(a.sun_path) - 1);
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errmsg(err, errlen, -errno, "socket: %s", strerror(errno));
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			close(fd);
			return errmsg(err, errlen, -EEXIST, "%s%s: exists and is not a socket", what, path);
		}
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(fd);
			return errmsg(err, errlen, -EADDRINUSE, "%s%s: another server is listening there",
				      what, path);
		}
		(void)unlink(path); /* stale: bind() below reports what is still wrong */
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
		int e = errno;
		close(fd);
		return errmsg(err, errlen, -e, "%s%s: %s", what, path, strerror(e));
	}
	return fd;
}

int unix_sock_dir(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	if (!slash) {
		*name = path;
		snprintf(dir, sizeof(dir), ".");
	} else {
		*name = slash + 1;
		/* unix_listen refused longer paths. */
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	}
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
