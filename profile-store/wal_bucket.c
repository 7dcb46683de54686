/*
 * wal_bucket.c - the per-push log in a shared block storage (a bucket):
 * every record a shared store appends to its local segment is also the
 * create-only object log/WRITER/SEG-REC before the append is
 * acknowledged, so an acknowledged profile survives the loss of the
 * replica's disk (docs/object-storage-layout.md, "The per-push log").
 * WRITER is the store's writer ID (32 hex digits), SEG the segment's
 * number (16 hex digits, as the local file and a block's log ranges name
 * it), REC the record's number in the segment (10 decimal digits): a
 * reader knows which segment an object belongs to, so a block's log
 * range (writer, segments lo..hi) says which objects it covers.  Once a
 * segment's blocks are in the index its objects are deleted.
 */
#include "pstore_wal.h"

#include <stdio.h>

void pstore_writer_hex(const uint8_t id[16], char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

void pstore_log_leaf_name(const uint8_t writer[16], const char *leaf,
			  char out[PS_LOGOBJ_NAME_MAX])
{
	char w[33];

	pstore_writer_hex(writer, w);
	snprintf(out, PS_LOGOBJ_NAME_MAX, "log/%s/%s", w, leaf);
}

void pstore_logobj_name(const uint8_t writer[16], uint64_t seg, uint64_t rec,
			char out[PS_LOGOBJ_NAME_MAX])
{
	char leaf[32];

	snprintf(leaf, sizeof(leaf), "%016llx-%010llu", (unsigned long long)seg,
		 (unsigned long long)rec);
	pstore_log_leaf_name(writer, leaf, out);
}

int pstore_logobj_put(struct pstore *s, uint64_t seg, uint64_t rec, const void *data,
		      size_t len, struct ember_diag *d)
{
	char name[PS_LOGOBJ_NAME_MAX];
	int err;

	pstore_logobj_name(s->writer, seg, rec, name);
	err = s->io.claim(s->io.ctx, name, data, len);
	/* our own name, written once: there already means another replica
	 * wrote under this writer ID (it took the log over, or a copied
	 * data directory); never acknowledged over it */
	EMBER_FAIL_IF(err == -EEXIST, d, -PSTORE_ERR_CLOSED,
		      "log object '%s' exists: another store writes under this writer ID", name);
	EMBER_FAIL_IF(err, d, err, "cannot write log object '%s': %s", name,
		      pstore_strerror(err));
	return 0;
}

struct drop_list {
	EMBER_VEC(char *) names;
};

static int on_name(void *arg, const char *name, uint64_t size)
{
	struct drop_list *l = arg;
	char *n = strdup(name);
	int err;

	(void)size;
	if (!n)
		return -ENOMEM;
	err = EMBER_VEC_APPEND(&l->names, n);
	if (err)
		free(n);
	return err;
}

void pstore_logobj_drop(struct pstore *s, const uint8_t writer[16], uint64_t seg)
{
	char prefix[PS_LOGOBJ_NAME_MAX];
	struct drop_list l = { 0 };
	int err;

	pstore_logobj_name(writer, seg, 0, prefix);
	*strrchr(prefix, '-') = '\0';
	strcat(prefix, "-");
	err = s->io.list(s->io.ctx, prefix, on_name, &l);
	if (err)
		pr_warn("pstore: cannot list the log objects '%s*' to delete: %s", prefix,
			pstore_strerror(err));
	for (size_t i = 0; i < l.names.n; i++) {
		int e = s->io.del(s->io.ctx, l.names.v[i]);

		if (e && e != -ENOENT)
			pr_warn("pstore: cannot delete log object '%s': %s", l.names.v[i],
				pstore_strerror(e));
		free(l.names.v[i]);
	}
	EMBER_VEC_FREE(&l.names);
}
