/*
 * upload_missing.c - --upload-missing: for a build ID the server has no
 * executable of, upload the file found on this host through `ember
 * serve`'s PUT /api/v1/artifacts/ID/executable (docs/http-api.md,
 * "Uploads"), so at least its symbol tables are there.  The server keeps
 * every candidate and serves the best, so a later CI upload with DWARF
 * wins.  A refusal is logged with the server's reason.  Only a file of
 * root's that no one else may write is uploaded (agent_file_trusted):
 * any user can craft an ELF claiming the build ID of a binary root runs,
 * and the server would then serve it as that binary.  The file is
 * streamed with pread, never mapped (its owner may truncate it: the
 * upload then fails, where a mapping faulted).
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* httpc_read_fn over the file: a file that shrank reads 0, -EIO. */
static ssize_t read_at(void *ctx, uint64_t off, char *buf, size_t n)
{
	ssize_t got = pread(*(const int *)ctx, buf, n, (off_t)off);

	return got < 0 ? -errno : got;
}

static int put_file(struct agent_http *h, const char *server, const char *id,
		    const char *path, int fd, size_t size)
{
	char url[1400];
	struct agent_http_req q = { .method = "PUT", .url = url, .read = read_at,
				    .read_ctx = &fd, .body_len = size,
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
		pr_debug("agent: uploaded '%s' (build ID %s, %zu bytes) to the server", path, id,
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

bool agent_file_trusted(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int agent_upload_missing(struct agent_http *h, const char *server, const char *id,
			 const char *path, int fd)
{
	struct stat st;
	int err = fstat(fd, &st) ? -errno : 0;

	if (!err && !agent_file_trusted(&st)) {
		pr_debug("agent: not uploading '%s' (build ID %s): %s (uid %u, mode %04o); only "
			"root's files no one else can write are uploaded",
			path, id, st.st_uid ? "not owned by root" : "writable by group or others",
			(unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	err = err ? err : server_has_executable(h, server, id);
	if (err != 0)
		return err > 0 ? 0 : err;
	if (fstat(fd, &st) || (uint64_t)st.st_size > AGENT_FILE_MAX || st.st_size == 0) {
		err = -EFBIG;
		pr_warn("agent: cannot upload '%s': %s", path, strerror(-err));
		return err;
	}
	return put_file(h, server, id, path, fd, (size_t)st.st_size);
}
