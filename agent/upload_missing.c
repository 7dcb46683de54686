/*
 * upload_missing.c - --upload-missing: for a build ID the server has no
 * executable of, upload the file found on this host through `ember
 * serve`'s PUT /api/v1/artifacts/ID/executable (docs/http-api.md,
 * "Uploads"), so at least its symbol tables are there.  The server keeps
 * every candidate and serves the best, so a later CI upload with DWARF
 * wins.  A refusal is logged with the server's reason.
 */
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define UPLOAD_MAX ((size_t)1 << 30)

/* 1 when the server has an executable for the build ID, 0 when not, or
 * a negative errno when it cannot be asked. */
static int server_has_executable(struct agent_http *h, const char *server, const char *id)
{
	char url[1024];
	struct agent_http_req q = { .method = "GET", .url = url, .max_reply = 1 << 20 };
	struct agent_http_reply r;
	int err, has;

	snprintf(url, sizeof(url), "%s/api/v1/artifacts/%s", server, id);
	err = agent_http_do(h, &q, &r);
	if (err) {
		agent_http_reply_release(&r);
		return err;
	}
	has = r.status == 200 && r.body.data && strstr(r.body.data, "\"executable\":\"") &&
	      strstr(r.body.data, "\"best\"");
	agent_http_reply_release(&r);
	return has;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int put_file(struct agent_http *h, const char *server, const char *id,
		    const char *path, const void *data, size_t size)
{
	char url[1400];
	struct agent_http_req q = { .method = "PUT", .url = url, .body = data, .body_len = size,
				    .content_type = "application/octet-stream",
				    .max_reply = 64 << 10, .timeout_ms = 300000 };
	struct agent_http_reply r;
	int err;

	snprintf(url, sizeof(url), "%s/api/v1/artifacts/%s/executable?name=%s", server, id,
		 base_name(path));
	err = agent_http_do(h, &q, &r);
	if (err) {
		pr_warn("agent: cannot upload '%s' to '%s': %s", path, server, r.err);
	} else if (r.status == 200 || r.status == 201) {
		pr_info("agent: uploaded '%s' (build ID %s, %zu bytes) to the server", path, id,
			size);
	} else {
		pr_warn("agent: the server refused the upload of '%s': HTTP %ld: %.*s%s", path,
			r.status, (int)strcspn(r.body.data ? r.body.data : "", "\n"),
			r.body.data ? r.body.data : "",
			r.status == 401 ? " (give --token, --token-file or EMBER_TOKEN)" : "");
		err = (int)r.status;
	}
	agent_http_reply_release(&r);
	return err;
}

int agent_upload_missing(struct agent_http *h, const char *server, const char *id,
			 const char *path, const char *open_path)
{
	struct stat st;
	void *data;
	int fd, err = server_has_executable(h, server, id);

	if (err != 0)
		return err > 0 ? 0 : err;
	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size > UPLOAD_MAX || st.st_size == 0) {
		err = fd < 0 ? -errno : -EFBIG;
		pr_warn("agent: cannot upload '%s': %s", path, strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED)
		return -errno;
	err = put_file(h, server, id, path, data, (size_t)st.st_size);
	munmap(data, (size_t)st.st_size);
	return err;
}
