/*
 * listen.c - the server's listening socket, made before the server runs
 * (api_server_listen() in api.h).
 *
 * Binding here, rather than in libmicrohttpd, gives the caller the port
 * bound (`--listen ADDR:0`) and the bind error before the server starts;
 * libmicrohttpd then takes the socket over (MHD_OPTION_LISTEN_SOCKET).
 */
#include "api.h"
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int parse_addr(const char *addr, uint16_t port, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1 ? 0 : -EINVAL;
	}
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	*len = sizeof(*in);
	return inet_pton(AF_INET, addr, &in->sin_addr) == 1 ? 0 : -EINVAL;
}

/* The port fd is bound to. */
static int bound_port(int fd, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -errno;
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

int api_server_listen(const struct api_server_opts *o, int *fd, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, err = parse_addr(o->listen_addr ? o->listen_addr : "127.0.0.1", o->port,
				      &ss, &len);

	if (err)
		return err;
	*fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*fd < 0)
		return -errno;
	if (setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(*fd, (struct sockaddr *)&ss, len) || listen(*fd, SOMAXCONN))
		err = -errno;
	if (!err)
		err = bound_port(*fd, port);
	if (err) {
		close(*fd);
		*fd = -1;
	}
	return err;
}
