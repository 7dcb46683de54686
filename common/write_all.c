/*
 * write_all.c - a whole buffer through write(2) (common.h): what every
 * writer of a file or pipe in the project needs, once.
 */
#include "common.h"

#include <errno.h>
#include <unistd.h>

int ember_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
