/*
 * upload_sources.c - the tar of sources `ember upload --sources` sends.
 *
 * Members are named by the path the DWARF uses (without the leading '/'),
 * since that is what debuginfod clients ask for; the bytes come from the
 * local file, found after --source-prefix-map rewrites (for builds made
 * with -fdebug-prefix-map).  Written by libarchive to an unlinked
 * temporary file, then streamed like any upload.
 */
#include "inspect.h"
#include "upload.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tar_walk {
	struct archive *ar;
	const struct upload_prefix_map *maps;
	size_t n_maps;
	size_t found, named;
};

static void local_path(const struct tar_walk *w, const char *path, char *out,
		       size_t size)
{
	for (size_t i = 0; i < w->n_maps; i++) {
		size_t n = strlen(w->maps[i].from);

		if (strncmp(path, w->maps[i].from, n) == 0 &&
		    (path[n] == '/' || path[n] == '\0')) {
			snprintf(out, size, "%s%s", w->maps[i].to, path + n);
			return;
		}
	}
	snprintf(out, size, "%s", path);
}

static int copy_file(struct archive *ar, int fd)
{
	char buf[1 << 16];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(ar, buf, (size_t)n) != n)
			return -EIO;
	return n < 0 ? -errno : 0;
}

static int add_member(const char *path, void *arg)
{
	struct tar_walk *w = arg;
	struct archive_entry *e;
	char local[8192];
	struct stat st;
	int fd, err;

	w->named++;
	local_path(w, path, local, sizeof(local));
	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* not here (system headers of another machine, ...) */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, path + 1);
	archive_entry_set_size(e, st.st_size);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, st.st_mtime, 0);
	err = archive_write_header(w->ar, e) == ARCHIVE_OK ? copy_file(w->ar, fd) : -EIO;
	archive_entry_free(e);
	close(fd);
	if (!err)
		w->found++;
	return err;
}

int upload_sources_tar(int dwarf_fd, const struct upload_prefix_map *maps,
		       size_t n_maps, int *out_fd, size_t *found, size_t *named)
{
	struct tar_walk w = { .maps = maps, .n_maps = n_maps };
	const char *tmp = getenv("TMPDIR");
	int fd = open(tmp ? tmp : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return -errno;
	w.ar = archive_write_new();
	archive_write_set_format_pax_restricted(w.ar);
	archive_write_add_filter_zstd(w.ar);
	err = archive_write_open_fd(w.ar, fd) == ARCHIVE_OK
		      ? inspect_list_sources(dwarf_fd, add_member, &w) : -EIO;
	if (archive_write_close(w.ar) != ARCHIVE_OK && !err)
		err = -EIO;
	archive_write_free(w.ar);
	if (err) {
		close(fd);
		return err;
	}
	*out_fd = fd;
	*found = w.found;
	*named = w.named;
	return 0;
}
