/*
 * pins.c - which derived artifact serves a build ID, readable without
 * RocksDB (store.h, "Pins").
 *
 * DIR/pins/BUILD_ID holds one line per kind: "KIND WHAT SHA256\n".  It is
 * replaced whole (written beside, renamed over), never edited in place.
 * Writing a pin needs no fsync: a pin lost in a crash only makes the next
 * start slower, and a torn file does not parse.  Removing the pins of a
 * build ID before one of its artifacts is recorded is fsynced: a pin must
 * never outlive better inputs.
 */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PIN_FILE_MAX 4096
#define PIN_KIND_MAX 32
#define PIN_LINE_MAX (PIN_KIND_MAX + STORE_NAME_MAX + STORE_SHA256_HEX + 4)

/* Build IDs name files here: lowercase hex only, nothing else. */
static bool valid_id(const char *id)
{
	size_t n = strspn(id, "0123456789abcdef");

	return n > 0 && id[n] == '\0' && n < STORE_BUILD_ID_HEX;
}

/* The pin file of id into buf (NUL-terminated): its length, 0 when there
 * is none, or a negative errno. */
static ssize_t read_pins(struct store *s, const char *id, char *buf, size_t size)
{
	int fd = openat(s->pins_fd, id, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno; /* before close(), which may change errno */
	close(fd);
	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

/* One line of a pin file: 1 when it parses, 0 when it does not. */
static int parse_line(const char *line, char kind[PIN_KIND_MAX], struct store_pin *p)
{
	char fmt[64];
	int end = 0;

	snprintf(fmt, sizeof(fmt), "%%%ds %%%ds %%64[0-9a-f]%%n", PIN_KIND_MAX - 1,
		 STORE_NAME_MAX - 1);
	if (sscanf(line, fmt, kind, p->what, p->sha256, &end) != 3)
		return 0;
	return strlen(p->sha256) == STORE_SHA256_HEX - 1 &&
	       (line[end] == '\n' || line[end] == '\0');
}

/*
 * The next whole line of *text into line (without its newline), moving
 * *text past it: false at the end.  A last line without a newline (torn)
 * is not returned; a line too long to be a pin comes back empty.
 */
static bool next_line(const char **text, char line[PIN_LINE_MAX])
{
	const char *nl = strchr(*text, '\n');
	size_t n;

	if (!nl)
		return false;
	n = (size_t)(nl - *text);
	if (n >= PIN_LINE_MAX)
		n = 0;
	memcpy(line, *text, n);
	line[n] = '\0';
	*text = nl + 1;
	return true;
}

int store_pins_find(const char *text, const char *kind, struct store_pin *out)
{
	char line[PIN_LINE_MAX], k[PIN_KIND_MAX];

	while (next_line(&text, line))
		if (parse_line(line, k, out) && strcmp(k, kind) == 0)
			return 0;
	return -ENOENT;
}

int store_find_pin(struct store *s, const char *build_id, const char *kind,
		   struct store_pin *out)
{
	char buf[PIN_FILE_MAX];
	ssize_t n;

	if (!valid_id(build_id))
		return -ENOENT;
	n = read_pins(s, build_id, buf, sizeof(buf));
	return n < 0 ? (int)n : store_pins_find(buf, kind, out);
}

/* Replace id's pin file with text (removing it when text is empty). */
static int write_pins(struct store *s, const char *id, const char *text)
{
	char tmp[STORE_BUILD_ID_HEX + 8];
	size_t len = strlen(text);
	int fd, err = 0;

	if (len == 0)
		return unlinkat(s->pins_fd, id, 0) && errno != ENOENT ? -errno : 0;
	snprintf(tmp, sizeof(tmp), ".%s.tmp", id);
	fd = openat(s->pins_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = ember_write_all(fd, text, len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(s->pins_fd, tmp, s->pins_fd, id))
		err = -errno;
	if (err)
		unlinkat(s->pins_fd, tmp, 0);
	return err;
}

/*
 * id's pin lines without those for which drop(kind, pin, arg) is true,
 * into out; *changed says whether any was dropped.
 */
static int keep_lines(struct store *s, const char *id, char *out, size_t size,
		      bool (*drop)(const char *kind, const struct store_pin *p, const void *arg),
		      const void *arg, bool *changed)
{
	char buf[PIN_FILE_MAX], line[PIN_LINE_MAX], kind[PIN_KIND_MAX];
	ssize_t n = read_pins(s, id, buf, sizeof(buf));
	const char *text = buf;
	struct store_pin p;
	size_t used = 0;

	out[0] = '\0';
	*changed = n > 0 && buf[n - 1] != '\n'; /* a torn last line goes */
	if (n < 0)
		return (int)n;
	while (next_line(&text, line)) {
		if (!parse_line(line, kind, &p) || drop(kind, &p, arg)) {
			*changed = true;
			continue;
		}
		used += (size_t)snprintf(out + used, size - used, "%s\n", line);
		if (used >= size)
			return -E2BIG;
	}
	return 0;
}

static bool same_kind(const char *kind, const struct store_pin *p, const void *arg)
{
	(void)p;
	return strcmp(kind, arg) == 0;
}

static bool names_what(const char *kind, const struct store_pin *p, const void *arg)
{
	(void)kind;
	return strcmp(p->what, arg) == 0;
}

int store_pin_derived(struct store *s, const char *build_id, const char *kind,
		      const char *what, uint64_t gen)
{
	char text[PIN_FILE_MAX];
	struct store_artifact a;
	struct store_pin old;
	bool changed;
	size_t used;
	int err;

	if (!valid_id(build_id) || !*kind || strlen(kind) >= PIN_KIND_MAX ||
	    strpbrk(kind, " \n") || !*what || strlen(what) >= STORE_NAME_MAX ||
	    strpbrk(what, " \n"))
		return -EINVAL;
	/* Pinned already (every index load asks): no lock, no RocksDB read.
	 * A pin naming what is current: a drop or an upload would have
	 * removed it. */
	if (store_find_pin(s, build_id, kind, &old) == 0 && strcmp(old.what, what) == 0)
		return 0;
	pthread_mutex_lock(&s->write_mu);
	if (store_generation(s) != gen) {
		err = -ESTALE; /* an upload came since the inputs were chosen */
		goto out;
	}
	err = store_find_derived(s, build_id, what, &a);
	if (err)
		goto out;
	err = keep_lines(s, build_id, text, sizeof(text), same_kind, kind, &changed);
	used = strlen(text);
	if (!err && (size_t)snprintf(text + used, sizeof(text) - used, "%s %s %s\n", kind, what,
				     a.sha256) >= sizeof(text) - used)
		err = -E2BIG;
	if (!err)
		err = write_pins(s, build_id, text);
out:
	pthread_mutex_unlock(&s->write_mu);
	return err;
}

int store_pin_drop(struct store *s, const char *build_id, const char *what)
{
	char text[PIN_FILE_MAX];
	bool changed;
	int err;

	if (!valid_id(build_id))
		return 0;
	err = keep_lines(s, build_id, text, sizeof(text), names_what, what, &changed);
	return err || !changed ? err : write_pins(s, build_id, text);
}

int store_pins_clear(struct store *s, const char *build_id)
{
	if (!valid_id(build_id))
		return 0;
	if (unlinkat(s->pins_fd, build_id, 0))
		return errno == ENOENT ? 0 : -errno;
	return fsync(s->pins_fd) ? -errno : 0;
}
