/*
 * index_entry.c - one entry of a shared store's block index
 * (docs/object-storage-layout.md, "Profiles"; block_index.c reads and appends
 * them): its text, written here and parsed here.  The parser reads
 * outside input (any writer of the bucket) and is fuzzed by
 * tests/fuzz/fuzz_pstore_index.c.
 *
 *   ember-pindex 1\n
 *   add blocks/PART-SHA.pblk SIZE\n      (at most once)
 *   wal WRITER LO HI\n                   (with add: its log ranges, at most 4096)
 *   sup blocks/PART-SHA.pblk\n           (any number, at most 4096)
 *
 * A block name is what block_name.c makes: "blocks/" (a rollup's
 * "rollups/", which a build without rollups skips the entry of), letters,
 * digits, '-', '.', at most 200 bytes, ending in ".pblk".
 */
#include "pstore_index.h"

#include <stdio.h>

#define ENTRY_MAGIC "ember-pindex 1\n"
#define ENTRY_MAX_SUP 4096
#define NAME_MAX_LEN 200

static bool block_name_ok(const char *p, size_t n)
{
	size_t dir = n >= 8 && !memcmp(p, "rollups/", 8) ? 8 : 7;

	if (n < dir + 5 || n > NAME_MAX_LEN ||
	    (dir == 7 && memcmp(p, "blocks/", 7) != 0) || memcmp(p + n - 5, ".pblk", 5) != 0)
		return false;
	for (size_t i = dir; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '-' || p[i] == '.'))
			return false;
	return !memmem(p, n, "..", 2);
}

static int parse_size(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 18)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*out = v;
	return 0;
}

static char *dup_n(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

/* "WRITER LO HI" (32 hex digits, two decimal numbers, LO <= HI). */
static int parse_range(const char *p, size_t n, struct pstore_index_range *r)
{
	const char *sp;
	char hex[33];

	if (n < 36 || p[32] != ' ')
		return -EINVAL;
	memcpy(hex, p, 32);
	hex[32] = '\0';
	for (int i = 0; i < 32; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			return -EINVAL;
	if (ember_hex_decode(hex, r->writer, 16))
		return -EINVAL;
	p += 33;
	n -= 33;
	sp = memchr(p, ' ', n);
	if (!sp || parse_size(p, (size_t)(sp - p), &r->lo) ||
	    parse_size(sp + 1, (size_t)(p + n - sp - 1), &r->hi) || r->lo > r->hi)
		return -EINVAL;
	return 0;
}

static int parse_wal(const char *p, size_t n, struct pstore_index_entry *e, size_t *alloc,
		     struct ember_diag *d)
{
	struct pstore_index_range r;

	EMBER_FAIL_IF(parse_range(p, n, &r), d, -PSTORE_ERR_CORRUPT,
		      "index entry: a bad 'wal' line (want WRITER LO HI)");
	EMBER_FAIL_IF(e->n_wal >= ENTRY_MAX_SUP, d, -PSTORE_ERR_CORRUPT,
		      "index entry: more than %d log ranges", ENTRY_MAX_SUP);
	EMBER_FORWARD_IF_ERROR(ember_vec_reserve((void **)&e->wal, alloc, e->n_wal + 1,
						 sizeof(*e->wal)));
	e->wal[e->n_wal++] = r;
	return 0;
}

/* One line (without its '\n') into e. */
static int parse_line(const char *p, size_t n, struct pstore_index_entry *e, size_t *alloc,
		      size_t *wal_alloc, struct ember_diag *d)
{
	if (n > 4 && memcmp(p, "wal ", 4) == 0)
		return parse_wal(p + 4, n - 4, e, wal_alloc, d);
	if (n > 4 && memcmp(p, "add ", 4) == 0) {
		const char *sp = memchr(p + 4, ' ', n - 4);

		EMBER_FAIL_IF(e->add, d, -PSTORE_ERR_CORRUPT, "index entry: two 'add' lines");
		EMBER_FAIL_IF(!sp || !block_name_ok(p + 4, (size_t)(sp - p - 4)), d,
			      -PSTORE_ERR_CORRUPT, "index entry: a bad block name after 'add'");
		EMBER_FAIL_IF(parse_size(sp + 1, (size_t)(p + n - sp - 1), &e->add_size), d,
			      -PSTORE_ERR_CORRUPT, "index entry: a bad block size");
		e->add = dup_n(p + 4, (size_t)(sp - p - 4));
		return e->add ? 0 : -ENOMEM;
	}
	EMBER_FAIL_IF(n < 4 || memcmp(p, "sup ", 4) != 0, d, -PSTORE_ERR_CORRUPT,
		      "index entry: a line that is neither 'add' nor 'sup'");
	EMBER_FAIL_IF(!block_name_ok(p + 4, n - 4), d, -PSTORE_ERR_CORRUPT,
		      "index entry: a bad block name after 'sup'");
	EMBER_FAIL_IF(e->n_sup >= ENTRY_MAX_SUP, d, -PSTORE_ERR_CORRUPT,
		      "index entry: more than %d superseded blocks", ENTRY_MAX_SUP);
	EMBER_FORWARD_IF_ERROR(ember_vec_reserve((void **)&e->sup, alloc, e->n_sup + 1,
						 sizeof(*e->sup)));
	e->sup[e->n_sup] = dup_n(p + 4, n - 4);
	if (!e->sup[e->n_sup])
		return -ENOMEM;
	e->n_sup++;
	return 0;
}

int pstore_index_entry_parse(const void *data, size_t len, struct pstore_index_entry *out,
			     char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct pstore_index_entry e = { 0 };
	const char *p = data, *end = p + len;
	size_t alloc = 0, wal_alloc = 0, m = strlen(ENTRY_MAGIC);
	int err = 0;

	if (len < m || memcmp(p, ENTRY_MAGIC, m) != 0)
		return EMBER_FAIL(&d, -PSTORE_ERR_CORRUPT, "index entry: not 'ember-pindex 1'");
	for (p += m; !err && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) {
			err = EMBER_FAIL(&d, -PSTORE_ERR_CORRUPT, "index entry: an unended line");
			break;
		}
		err = parse_line(p, (size_t)(nl - p), &e, &alloc, &wal_alloc, &d);
		p = nl + 1;
	}
	if (!err && !e.add && !e.n_sup)
		err = EMBER_FAIL(&d, -PSTORE_ERR_CORRUPT, "index entry: adds and supersedes nothing");
	if (!err && !e.add && e.n_wal)
		err = EMBER_FAIL(&d, -PSTORE_ERR_CORRUPT, "index entry: log ranges without 'add'");
	if (err) {
		pstore_index_entry_release(&e);
		return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
	}
	*out = e;
	return 0;
}

void pstore_index_entry_release(struct pstore_index_entry *e)
{
	if (!e)
		return;
	free(e->add);
	for (size_t i = 0; i < e->n_sup; i++)
		free(e->sup[i]);
	free(e->sup);
	free(e->wal);
	memset(e, 0, sizeof(*e));
}

int pstore_index_entry_encode(const struct pstore_index_entry *e, struct ember_buf *out)
{
	int err = ember_buf_appendf(out, "%s", ENTRY_MAGIC);

	if (!err && e->add)
		err = ember_buf_appendf(out, "add %s %llu\n", e->add,
					(unsigned long long)e->add_size);
	for (size_t i = 0; !err && i < e->n_wal; i++) {
		char hex[33];

		ember_hex_encode(e->wal[i].writer, 16, hex);
		err = ember_buf_appendf(out, "wal %s %llu %llu\n", hex,
					(unsigned long long)e->wal[i].lo,
					(unsigned long long)e->wal[i].hi);
	}
	for (size_t i = 0; !err && i < e->n_sup; i++)
		err = ember_buf_appendf(out, "sup %s\n", e->sup[i]);
	return err;
}

/* ---- keys: index/PART/SEQ, PART 16 lowercase hex digits, SEQ 10 decimal -------- */

void pstore_index_key(int64_t part, uint64_t seq, char name[PS_INDEX_KEY_MAX])
{
	snprintf(name, PS_INDEX_KEY_MAX, "index/%016llx/%010llu", (unsigned long long)part,
		 (unsigned long long)seq);
}

int pstore_index_key_parse(const char *name, int64_t *part, uint64_t *seq)
{
	uint64_t p = 0, q = 0;

	if (strlen(name) != 33 || memcmp(name, "index/", 6) != 0 || name[22] != '/')
		return -EINVAL;
	for (int i = 6; i < 22; i++) {
		char c = name[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -EINVAL;
		p = p << 4 | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	for (int i = 23; i < 33; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -EINVAL;
		q = q * 10 + (uint64_t)(name[i] - '0');
	}
	if (!q || p > INT64_MAX) /* a partition is a time: never negative */
		return -EINVAL;
	*part = (int64_t)p;
	*seq = q;
	return 0;
}
