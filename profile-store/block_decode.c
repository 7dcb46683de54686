/*
 * block_decode.c - a block's bytes back into memory, trusting nothing:
 * the header's magic, version and hash; each section inside the file,
 * its hash checked before it is decompressed (zstd, with its own frame
 * checksum) into a buffer no larger than the size it declares; every
 * count bounded by the bytes left; every reference (string, function,
 * mapping, location, parent node, series, type) inside its table.  A
 * failed check is -PSTORE_ERR_CORRUPT with the reason, never "not found".
 * docs/profile-store-format.md has the layout.
 */
#include "pstore_block.h"
#include "pstore_bytes.h"
#include "pstore_series.h"

#include <zstd.h>

#define CORRUPT(d, ...) EMBER_FAIL((d), -PSTORE_ERR_CORRUPT, __VA_ARGS__)
#define GET(expr, d, what)                                                   \
	do {                                                                 \
		if ((expr) != 0)                                             \
			return CORRUPT((d), "block: %s: truncated or out of range", (what)); \
	} while (0)
#define MAX_DEPTH 4096

void pstore_block_meta_release(struct pstore_block_meta *m)
{
	for (size_t i = 0; i < m->parents.n; i++)
		free(m->parents.v[i]);
	EMBER_VEC_FREE(&m->parents);
	EMBER_VEC_FREE(&m->wal);
	for (size_t i = 0; i < m->sources.n; i++)
		free(m->sources.v[i]);
	EMBER_VEC_FREE(&m->sources);
}

/* ---- header and sections ---------------------------------------------------- */

int pstore_block_header_len(const uint8_t *data, size_t len, size_t *need, struct ember_diag *d)
{
	uint32_t nsec;

	EMBER_FAIL_IF(len < PS_BLOCK_HEADER || memcmp(data, PS_BLOCK_MAGIC, 8) != 0, d,
		      -PSTORE_ERR_CORRUPT,
		      "block: not a block (bad magic or shorter than its header)");
	EMBER_FAIL_IF(pstore_rd32(data + 8) < PS_BLOCK_VERSION ||
			      pstore_rd32(data + 8) > PS_BLOCK_VERSION_FRAMES,
		      d, -PSTORE_ERR_CORRUPT, "block: version %u, this build reads versions %d to %d",
		      pstore_rd32(data + 8), PS_BLOCK_VERSION, PS_BLOCK_VERSION_FRAMES);
	nsec = pstore_rd32(data + 12);
	EMBER_FAIL_IF(nsec > PS_BLOCK_MAX_SECTIONS, d, -PSTORE_ERR_CORRUPT,
		      "block: %u sections, more than %d", nsec, PS_BLOCK_MAX_SECTIONS);
	*need = PS_BLOCK_HEADER + (size_t)nsec * PS_SECTION_ENTRY;
	return 0;
}

static int read_entry(const uint8_t *e, uint64_t hlen, uint64_t size, struct pstore_block_meta *m,
		      struct ember_diag *d)
{
	struct pstore_section s = { .kind = pstore_rd32(e),
				   .codec = pstore_rd32(e + 4),
				   .off = pstore_rd64(e + 8),
				   .stored = pstore_rd64(e + 16),
				   .raw = pstore_rd64(e + 24),
				   .hash = pstore_rd64(e + 32) };

	EMBER_FAIL_IF(s.off < hlen || s.off > size || s.stored > size - s.off, d,
		      -PSTORE_ERR_CORRUPT, "block: section %u lies outside the file", s.kind);
	EMBER_FAIL_IF(s.codec > 1 || (s.codec == 0 && s.raw != s.stored) ||
			      s.raw > PS_SECTION_MAX_RAW,
		      d, -PSTORE_ERR_CORRUPT, "block: section %u: bad codec or size", s.kind);
	if (s.kind == 0 || s.kind >= PS_SEC_KIND_MAX)
		return 0; /* a later version's section: ignored */
	EMBER_FAIL_IF(m->has[s.kind], d, -PSTORE_ERR_CORRUPT, "block: section %u twice",
		      s.kind);
	m->has[s.kind] = true;
	m->sec[s.kind] = s;
	return 0;
}

int pstore_block_header(const uint8_t *data, size_t len, uint64_t size, struct pstore_block_meta *m,
		    struct ember_diag *d)
{
	size_t hlen;

	memset(m, 0, sizeof(*m));
	EMBER_FORWARD_IF_ERROR(pstore_block_header_len(data, len, &hlen, d));
	EMBER_FAIL_IF(len < hlen || size < hlen, d, -PSTORE_ERR_CORRUPT,
		      "block: shorter than its section table");
	EMBER_FAIL_IF(pstore_rd64(data + 48) != ember_checksum64(data + PS_BLOCK_HEADER,
							    hlen - PS_BLOCK_HEADER,
							    ember_checksum64(data, 48, 0)),
		      d, -PSTORE_ERR_CORRUPT, "block: header hash mismatch");
	m->version = pstore_rd32(data + 8);
	m->min_time = (int64_t)pstore_rd64(data + 16);
	m->max_time = (int64_t)pstore_rd64(data + 24);
	m->partition = (int64_t)pstore_rd64(data + 32);
	m->partition_ns = (int64_t)pstore_rd64(data + 40);
	EMBER_FAIL_IF(m->min_time > m->max_time || m->partition_ns <= 0, d, -PSTORE_ERR_CORRUPT,
		      "block: bad time range");
	for (uint32_t i = 0; i < pstore_rd32(data + 12); i++)
		EMBER_FORWARD_IF_ERROR(read_entry(data + PS_BLOCK_HEADER + (size_t)i * PS_SECTION_ENTRY, hlen, size,
				  m, d));
	for (int k = 1; k < PS_SEC_KIND_MAX; k++)
		EMBER_FAIL_IF(!m->has[k] && (k <= PS_SEC_REQUIRED_MAX ||
					     (k == PS_SEC_LINKS &&
					      m->version == PS_BLOCK_VERSION_LINKS)),
			      d, -PSTORE_ERR_CORRUPT, "block: section %d missing", k);
	return 0;
}

static int unzstd(const uint8_t *src, size_t len, uint64_t raw, struct ember_buf *out,
		  struct ember_diag *d)
{
	struct pstore_stream st = { .raw = raw, .stored = len };

	return pstore_stream_load(&st, src, len, NULL, out, d);
}

int pstore_block_section(const struct pstore_block_meta *m, enum pstore_section_kind kind,
			 const uint8_t *stored, size_t len, struct ember_buf *out,
			 struct ember_diag *d)
{
	const struct pstore_section *s = &m->sec[kind];

	EMBER_FAIL_IF(len != s->stored, d, -PSTORE_ERR_CORRUPT, "block: section %d truncated",
		      kind);
	EMBER_FAIL_IF(kind != PS_SEC_ROWS && ember_checksum64(stored, len, kind) != s->hash, d,
		      -PSTORE_ERR_CORRUPT, "block: section %d hash mismatch", kind);
	if (s->codec == 0) {
		ember_buf_reset(out);
		out->cap = len;
		return ember_buf_append(out, stored, len);
	}
	return unzstd(stored, len, s->raw, out, d);
}

/* ---- meta, series, labels -------------------------------------------------- */

/* varint n, n x str block name, into out (NULL: skipped). */
static int get_names(const uint8_t **p, const uint8_t *end, size_t len, struct pstore_strs *out,
		     const char *what, struct ember_diag *d)
{
	uint64_t n;

	GET(ember_cur_uleb(p, end, &n), d, what);
	GET(n > len ? -1 : 0, d, what);
	for (uint64_t i = 0; i < n; i++) {
		const char *s;
		size_t sl;
		char *copy;

		GET(pstore_get_str(p, end, PS_BLOCK_NAME_MAX, &s, &sl), d, what);
		if (!out)
			continue;
		copy = strndup(s, sl);
		if (!copy || EMBER_VEC_APPEND(out, copy)) {
			free(copy);
			return -ENOMEM;
		}
	}
	return 0;
}

int pstore_block_decode_meta(const uint8_t *p, size_t len, struct pstore_block_meta *m,
			 struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint64_t n;

	EMBER_FORWARD_IF_ERROR(get_names(&p, end, len, &m->parents, "parent name", d));
	GET(ember_cur_uleb(&p, end, &n), d, "log ranges");
	GET(n > len ? -1 : 0, d, "log ranges");
	for (uint64_t i = 0; i < n; i++) {
		struct pstore_walrange w;
		const uint8_t *id;

		GET(ember_cur_bytes(&p, end, 16, &id), d, "log range");
		ember_memcpy(w.writer, id, 16);
		GET(ember_cur_uleb(&p, end, &w.lo), d, "log range");
		GET(ember_cur_uleb(&p, end, &w.hi), d, "log range");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&m->wal, w));
	}
	GET(ember_cur_uleb(&p, end, &m->profiles), d, "counts");
	GET(ember_cur_uleb(&p, end, &m->rows), d, "counts");
	GET(ember_cur_uleb(&p, end, &m->series), d, "counts");
	return 0;
}

static int decode_strings(const uint8_t *p, size_t len, struct pmodel_strtab *t,
			  struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint64_t n;

	GET(ember_cur_uleb(&p, end, &n), d, "strings");
	GET(n > len ? -1 : 0, d, "string count");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&t->off, n + 1));
	for (uint64_t i = 0; i < n; i++) {
		const char *s;
		size_t sl;
		uint32_t id;
		int err;

		GET(pstore_get_str(&p, end, len, &s, &sl), d, "string");
		err = pmodel_strtab_add(t, s, sl, &id);
		EMBER_FAIL_IF(err == -EINVAL, d, -PSTORE_ERR_CORRUPT,
			      "block: string with a NUL byte");
		EMBER_FORWARD_IF_ERROR(err);
	}
	return 0;
}

static int decode_types(const uint8_t **p, const uint8_t *end, struct pstore_seriestab *t,
			struct ember_diag *d)
{
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&t->str), n;

	GET(pstore_get_u32max(p, end, (uint32_t)(end - *p), &n), d, "types");
	for (uint32_t i = 0; i < n; i++) {
		struct pstore_type ty;

		for (int k = 0; k < 5; k++)
			GET(pstore_get_u32max(p, end, nstr - 1, &ty.f[k]), d, "type field");
		GET(pstore_get_u32max(p, end, nstr - 1, &ty.id), d, "type id");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->types, ty));
	}
	return 0;
}

static int decode_one_series(const uint8_t **p, const uint8_t *end, struct pstore_seriestab *t,
			     struct ember_diag *d)
{
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&t->str);
	struct pstore_series s = { .label_off = (uint32_t)t->pairs.n,
				  .type_off = (uint32_t)t->type_ids.n };
	const char *tids[64];
	struct pstore_label labels[256];

	GET(pstore_get_u32max(p, end, 64, &s.ntypes), d, "series types");
	GET(s.ntypes ? 0 : -1, d, "series without columns");
	for (uint32_t k = 0; k < s.ntypes; k++) {
		uint32_t ty;

		GET(pstore_get_u32max(p, end, (uint32_t)t->types.n - 1, &ty), d, "series type");
		GET(t->types.n ? 0 : -1, d, "series type");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->type_ids, ty));
		tids[k] = pstore_type_str(t, ty);
	}
	GET(pstore_get_u32max(p, end, 256, &s.nlabels), d, "series labels");
	for (uint32_t k = 0; k < s.nlabels; k++) {
		struct pstore_lpair lp;

		GET(pstore_get_u32max(p, end, nstr - 1, &lp.name), d, "label name");
		GET(pstore_get_u32max(p, end, nstr - 1, &lp.value), d, "label value");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->pairs, lp));
		labels[k].name = pmodel_str(&t->str, lp.name);
		labels[k].value = pmodel_str(&t->str, lp.value);
		GET(k && strcmp(labels[k - 1].name, labels[k].name) >= 0 ? -1 : 0, d,
		    "series labels out of order");
	}
	s.key = pstore_series_key(&t->ident, labels, s.nlabels, tids, s.ntypes);
	return EMBER_VEC_APPEND(&t->series, s);
}

int pstore_block_decode_series(const uint8_t *strs, size_t slen, const uint8_t *ser, size_t len,
			   struct pstore_seriestab *t, struct ember_diag *d)
{
	const uint8_t *p = ser, *end = ser + len;
	uint32_t n;

	EMBER_FORWARD_IF_ERROR(decode_strings(strs, slen, &t->str, d));
	EMBER_FORWARD_IF_ERROR(decode_types(&p, end, t, d));
	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "series count");
	for (uint32_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(decode_one_series(&p, end, t, d));
	return pstore_seriestab_index(t);
}

/* Whether series s has the pair (name, value). */
static bool series_has(const struct pstore_seriestab *t, uint32_t s, uint32_t name, uint32_t value)
{
	const struct pstore_series *se = &t->series.v[s];

	for (uint32_t i = 0; i < se->nlabels; i++)
		if (t->pairs.v[se->label_off + i].name == name &&
		    t->pairs.v[se->label_off + i].value == value)
			return true;
	return false;
}

static int decode_value(const uint8_t **p, const uint8_t *end, const struct pstore_seriestab *t,
			uint32_t name, struct pstore_lindex *ix, struct ember_diag *d)
{
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&t->str), ns = (uint32_t)t->series.n;
	struct pstore_lval v = { .post_off = (uint32_t)ix->post.n };
	uint64_t s = 0;

	GET(pstore_get_u32max(p, end, nstr - 1, &v.value), d, "label value");
	GET(pstore_get_u32max(p, end, ns, &v.npost), d, "postings");
	for (uint32_t k = 0; k < v.npost; k++) {
		uint64_t delta;

		GET(ember_cur_uleb(p, end, &delta), d, "posting");
		s += delta;
		GET((k && !delta) || s >= ns || !series_has(t, (uint32_t)s, name, v.value) ? -1 : 0,
		    d, "posting disagrees with the series");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ix->post, (uint32_t)s));
	}
	return EMBER_VEC_APPEND(&ix->vals, v);
}

int pstore_block_decode_labels(const uint8_t *p, size_t len, const struct pstore_seriestab *t,
			   struct pstore_lindex *ix, struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&t->str), n;

	memset(ix, 0, sizeof(*ix));
	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "label names");
	for (uint32_t i = 0; i < n; i++) {
		struct pstore_lname ln = { .val_off = (uint32_t)ix->vals.n };

		GET(pstore_get_u32max(&p, end, nstr - 1, &ln.name), d, "label name");
		GET(i && strcmp(pmodel_str(&t->str, ix->names.v[i - 1].name),
				pmodel_str(&t->str, ln.name)) >= 0
			    ? -1
			    : 0,
		    d, "label names out of order");
		GET(pstore_get_u32max(&p, end, (uint32_t)len, &ln.nvals), d, "label values");
		for (uint32_t k = 0; k < ln.nvals; k++) {
			EMBER_FORWARD_IF_ERROR(decode_value(&p, end, t, ln.name, ix, d));
			GET(k && strcmp(pmodel_str(&t->str, ix->vals.v[ix->vals.n - 2].value),
					pmodel_str(&t->str, ix->vals.v[ix->vals.n - 1].value)) >= 0
				    ? -1
				    : 0,
			    d, "label values out of order");
		}
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ix->names, ln));
	}
	GET(ix->post.n != t->pairs.n ? -1 : 0, d, "label index misses series labels");
	return 0;
}

/* ---- dictionary ---------------------------------------------------------------- */

static int decode_functions(const uint8_t *p, size_t len, struct pmodel_dict *dt,
			    struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&dt->str), n;

	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "functions");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&dt->funcs, n));
	dt->funcs.n = n;
	for (uint32_t i = 0; i < n; i++)
		GET(pstore_get_u32max(&p, end, nstr - 1, &dt->funcs.v[i].name), d, "function name");
	for (uint32_t i = 0; i < n; i++)
		GET(pstore_get_u32max(&p, end, nstr - 1, &dt->funcs.v[i].system_name), d,
		    "function");
	for (uint32_t i = 0; i < n; i++)
		GET(pstore_get_u32max(&p, end, nstr - 1, &dt->funcs.v[i].filename), d,
		    "function file");
	for (uint32_t i = 0; i < n; i++)
		GET(ember_cur_zigzag(&p, end, &dt->funcs.v[i].start_line), d, "function line");
	return 0;
}

static int decode_mappings(const uint8_t *p, size_t len, struct pmodel_dict *dt,
			   struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&dt->str), n;

	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "mappings");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&dt->maps, n));
	dt->maps.n = n;
	for (uint32_t i = 0; i < n; i++) {
		struct pmodel_map *m = &dt->maps.v[i];
		uint64_t size;

		GET(ember_cur_uleb(&p, end, &m->start), d, "mapping");
		GET(ember_cur_uleb(&p, end, &size), d, "mapping");
		GET(size > UINT64_MAX - m->start ? -1 : 0, d, "mapping size");
		m->limit = m->start + size;
		GET(ember_cur_uleb(&p, end, &m->offset), d, "mapping");
		GET(pstore_get_u32max(&p, end, nstr - 1, &m->filename), d, "mapping file");
		GET(pstore_get_u32max(&p, end, nstr - 1, &m->build_id), d, "mapping build ID");
	}
	return 0;
}

static int decode_lines(const uint8_t **p, const uint8_t *end, struct pmodel_dict *dt,
			struct ember_diag *d)
{
	for (size_t i = 0; i < dt->locs.n; i++) {
		struct pmodel_loc *l = &dt->locs.v[i];

		GET(dt->lines.n + l->nlines >= UINT32_MAX ? -1 : 0, d, "lines");
		l->line_off = (uint32_t)dt->lines.n;
		for (uint32_t k = 0; k < l->nlines; k++) {
			struct pmodel_line ln;

			GET(pstore_get_u32max(p, end, (uint32_t)dt->funcs.n - 1, &ln.func), d,
			    "line");
			GET(dt->funcs.n ? 0 : -1, d, "line without functions");
			GET(ember_cur_zigzag(p, end, &ln.line), d, "line number");
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&dt->lines, ln));
		}
	}
	return 0;
}

static int decode_locations(const uint8_t *p, size_t len, struct pmodel_dict *dt,
			    struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint64_t addr = 0;
	uint32_t n;

	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "locations");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&dt->locs, n));
	dt->locs.n = n;
	for (uint32_t i = 0; i < n; i++) {
		dt->locs.v[i].type = 0; /* none unless LOCATION_TYPES says */
		GET(pstore_get_u32max(&p, end, (uint32_t)dt->maps.n, &dt->locs.v[i].mapping), d,
		    "location mapping");
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t delta;

		GET(ember_cur_zigzag(&p, end, &delta), d, "location address");
		addr += (uint64_t)delta;
		dt->locs.v[i].address = addr;
	}
	for (uint32_t i = 0; i < n; i++)
		GET(pstore_get_u32max(&p, end, 1 << 16, &dt->locs.v[i].nlines), d,
		    "location lines");
	return decode_lines(&p, end, dt, d);
}

static int decode_nodes(const uint8_t *p, size_t len, struct pmodel_dict *dt, struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint16_t *depth;
	uint32_t n;

	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "nodes");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&dt->node_parent, (size_t)n + 1));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&dt->node_loc, (size_t)n + 1));
	depth = calloc((size_t)n + 1, sizeof(*depth));
	if (!depth)
		return -ENOMEM;
	dt->node_parent.n = dt->node_loc.n = (size_t)n + 1;
	for (uint32_t i = 1; i <= n; i++) {
		uint32_t delta;

		if (pstore_get_u32max(&p, end, i, &delta) || !delta ||
		    (depth[i] = depth[i - delta] + 1) > MAX_DEPTH) {
			free(depth);
			return CORRUPT(d, "block: node %u: bad parent or deeper than %d", i,
				       MAX_DEPTH);
		}
		dt->node_parent.v[i] = i - delta;
	}
	free(depth);
	for (uint32_t i = 1; i <= n; i++)
		GET(pstore_get_u32max(&p, end, (uint32_t)dt->locs.n - 1, &dt->node_loc.v[i]) ||
			    !dt->locs.n ? -1 : 0, d, "node location");
	return 0;
}

/* LOCATION_TYPES: one string id a location (0: none). */
static int decode_location_types(const uint8_t *p, size_t len, struct pmodel_dict *dt,
				 struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint32_t nstr = (uint32_t)pmodel_strtab_count(&dt->str), n;

	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "location types");
	GET(n != dt->locs.n ? -1 : 0, d, "location types: not one a location");
	for (uint32_t i = 0; i < n; i++)
		GET(pstore_get_u32max(&p, end, nstr - 1, &dt->locs.v[i].type), d,
		    "location type");
	return 0;
}

int pstore_block_decode_dict(const uint8_t *const sec[PS_SEC_KIND_MAX],
			     const size_t len[PS_SEC_KIND_MAX], struct pmodel_dict *dt,
			     struct ember_diag *d)
{
	EMBER_FORWARD_IF_ERROR(decode_strings(sec[PS_SEC_STRINGS], len[PS_SEC_STRINGS], &dt->str, d));
	EMBER_FORWARD_IF_ERROR(decode_functions(sec[PS_SEC_FUNCTIONS], len[PS_SEC_FUNCTIONS], dt, d));
	EMBER_FORWARD_IF_ERROR(decode_mappings(sec[PS_SEC_MAPPINGS], len[PS_SEC_MAPPINGS], dt, d));
	EMBER_FORWARD_IF_ERROR(decode_locations(sec[PS_SEC_LOCATIONS], len[PS_SEC_LOCATIONS], dt, d));
	if (sec[PS_SEC_LOCATION_TYPES])
		EMBER_FORWARD_IF_ERROR(decode_location_types(sec[PS_SEC_LOCATION_TYPES],
							     len[PS_SEC_LOCATION_TYPES], dt, d));
	return decode_nodes(sec[PS_SEC_NODES], len[PS_SEC_NODES], dt, d);
}

/* ---- profiles and streams ------------------------------------------------------ */

static int decode_cov(const uint8_t **p, const uint8_t *end, uint32_t nstr, struct pstore_prof *pr,
		      struct pstore_bdata *b, struct ember_diag *d)
{
	GET(ember_cur_uleb(p, end, &pr->samples), d, "coverage");
	GET(ember_cur_uleb(p, end, &pr->resolved), d, "coverage");
	GET(pstore_get_u32max(p, end, (uint32_t)(end - *p), &pr->ncov), d, "coverage");
	pr->cov_off = (uint32_t)b->cov.n;
	for (uint32_t k = 0; k < pr->ncov; k++) {
		struct pstore_cov c;

		GET(pstore_get_u32max(p, end, nstr - 1, &c.build_id), d, "coverage build ID");
		GET(pstore_get_u32max(p, end, nstr - 1, &c.reason), d, "coverage reason");
		GET(ember_cur_uleb(p, end, &c.samples), d, "coverage samples");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&b->cov, c));
	}
	return 0;
}

static int decode_profile(const uint8_t **p, const uint8_t *end, const struct pstore_seriestab *t,
			  struct pstore_bdata *b, uint32_t *series, int64_t *time,
			  uint64_t *row_off, struct ember_diag *d)
{
	struct pstore_prof pr = { 0 };
	uint32_t delta;
	int64_t dt;

	GET(pstore_get_u32max(p, end, (uint32_t)t->series.n, &delta), d, "profile series");
	GET(*series + (uint64_t)delta >= t->series.n ? -1 : 0, d, "profile series");
	if (delta)
		*row_off = 0;
	pr.series = *series += delta;
	GET(ember_cur_zigzag(p, end, &dt), d, "profile time");
	GET(!delta && dt < 0 ? -1 : 0, d, "profile time order"); /* in a series: ascending */
	pr.time = *time = (int64_t)((uint64_t)*time + (uint64_t)dt);
	GET(ember_cur_zigzag(p, end, &pr.duration), d, "profile duration");
	GET(ember_cur_zigzag(p, end, &pr.period), d, "profile period");
	GET(pstore_get_u32max(p, end, UINT32_MAX - 1, &pr.nrows), d, "profile rows");
	pr.row_off = *row_off;
	*row_off += pr.nrows;
	pr.tot_off = (uint32_t)b->totals.n;
	for (uint32_t c = 0; c < t->series.v[pr.series].ntypes; c++) {
		int64_t v;

		GET(ember_cur_zigzag(p, end, &v), d, "profile totals");
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&b->totals, v));
	}
	EMBER_FORWARD_IF_ERROR(decode_cov(p, end, (uint32_t)pmodel_strtab_count(&t->str), &pr, b, d));
	return EMBER_VEC_APPEND(&b->profs, pr);
}

/* A rollup's per-profile counts, after its PROFILES: each at least one
 * profile, the last within the step of the first. */
static int decode_rollup_profs(const uint8_t *p, const uint8_t *end, int64_t step,
			       uint64_t total, struct pstore_bdata *b, struct ember_diag *d)
{
	uint64_t n, sum = 0;

	GET(ember_cur_uleb(&p, end, &n), d, "rollup profiles");
	GET(n != b->profs.n ? -1 : 0, d, "rollup profile count");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&b->rollup, n));
	for (uint64_t i = 0; i < n; i++) {
		struct pstore_rollup_prof r;
		uint64_t span;

		GET(ember_cur_uleb(&p, end, &r.count), d, "rollup profile");
		GET(ember_cur_uleb(&p, end, &span), d, "rollup profile");
		GET(!r.count || span >= (uint64_t)step ? -1 : 0, d, "rollup profile");
		r.last = b->profs.v[i].time + (int64_t)span;
		b->rollup.v[b->rollup.n++] = r;
		sum += r.count;
	}
	GET(sum != total ? -1 : 0, d, "rollup profiles summed");
	return 0;
}

int pstore_block_decode_rollup(const uint8_t *p, size_t len, struct pstore_block_meta *m,
			       struct pstore_bdata *b, struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint64_t step, total;

	GET(ember_cur_uleb(&p, end, &step), d, "rollup step");
	GET(!step || step > (uint64_t)m->partition_ns ? -1 : 0, d, "rollup step");
	GET(ember_cur_uleb(&p, end, &total), d, "rollup profiles summed");
	if (!b) {
		m->rollup_step = (int64_t)step;
		m->rollup_profiles = total;
	}
	EMBER_FORWARD_IF_ERROR(get_names(&p, end, len, b ? NULL : &m->sources, "rollup source", d));
	return b ? decode_rollup_profs(p, end, (int64_t)step, total, b, d) : 0;
}

int pstore_block_decode_profiles(const uint8_t *p, size_t len, const struct pstore_seriestab *t,
				 const struct pstore_block_meta *m, struct pstore_bdata *b,
				 struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint32_t n, series = 0;
	int64_t time = 0;
	uint64_t row_off = 0;

	GET(pstore_get_u32max(&p, end, (uint32_t)len, &n), d, "profiles");
	GET(n != m->profiles ? -1 : 0, d, "profile count");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&b->series_prof, t->series.n + 1));
	b->series_prof.n = t->series.n + 1;
	for (size_t s = 0; s <= t->series.n; s++)
		b->series_prof.v[s] = UINT32_MAX;
	for (uint32_t i = 0; i < n; i++) {
		EMBER_FORWARD_IF_ERROR(decode_profile(&p, end, t, b, &series, &time, &row_off, d));
		if (b->series_prof.v[series] == UINT32_MAX)
			b->series_prof.v[series] = i;
	}
	/* Series without profiles start where the next one does. */
	b->series_prof.v[t->series.n] = n;
	for (size_t s = t->series.n; s-- > 0;)
		if (b->series_prof.v[s] == UINT32_MAX)
			b->series_prof.v[s] = b->series_prof.v[s + 1];
	return 0;
}

int pstore_block_decode_streams(const uint8_t *p, size_t len, const struct pstore_seriestab *t,
				const struct pstore_block_meta *m, struct pstore_bdata *b,
				struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint64_t n, off = 0;

	GET(ember_cur_uleb(&p, end, &n), d, "streams");
	GET(n > len ? -1 : 0, d, "streams");
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&b->series_stream, t->series.n + 1));
	b->linked = pstore_meta_linked(m);
	b->framed = pstore_meta_framed(m);
	for (size_t s = 0; s < t->series.n; s++) {
		uint32_t ncols = t->series.v[s].ntypes, last = ncols + b->linked;

		if (b->series_prof.v[s] == b->series_prof.v[s + 1]) {
			b->series_stream.v[s] = UINT32_MAX; /* no profiles: no streams */
			continue;
		}
		b->series_stream.v[s] = (uint32_t)b->streams.n;
		for (uint32_t c = 0; c <= last; c++) {
			struct pstore_stream st = { 0 };

			GET(pstore_get_u32max(&p, end, PS_STREAM_LINKS, &st.kind), d,
			    "stream kind");
			/* a linked block's: the links last, and only there */
			GET((c > ncols) != (st.kind == PS_STREAM_LINKS) ? -1 : 0, d, "stream kind");
			GET(pstore_get_u32max(&p, end, ncols, &st.ref), d, "stream reference");
			GET(ember_cur_zigzag(&p, end, &st.factor), d, "stream factor");
			GET(ember_cur_uleb(&p, end, &st.stored), d, "stream size");
			GET(ember_cur_uleb(&p, end, &st.raw), d, "stream size");
			GET((c == 0) != (st.kind == PS_STREAM_STACKS) ? -1 : 0, d, "stream kind");
			/* column c - 1 derived from an earlier plain column */
			GET(st.kind == PS_STREAM_DERIVED &&
				    (st.ref + 1 >= c ||
				     b->streams.v[b->series_stream.v[s] + 1 + st.ref].kind !=
					     PS_STREAM_VALUES) ? -1 : 0, d, "derived stream");
			GET(st.kind == PS_STREAM_VALUES && st.factor <= 0 ? -1 : 0, d,
			    "stream factor");
			GET(st.stored > m->sec[PS_SEC_ROWS].stored - off ? -1 : 0, d,
			    "stream extent");
			st.off = off;
			off += st.kind == PS_STREAM_DERIVED ? 0 : st.stored;
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&b->streams, st));
		}
	}
	b->series_stream.n = t->series.n;
	GET(b->streams.n != n ? -1 : 0, d, "stream count");
	return 0;
}

/* Attribute set id (ids in order, each new, its text as stored). */
static int decode_attrs(const uint8_t **p, const uint8_t *end, struct pstore_linktab *t,
			uint32_t id, struct ember_diag *d)
{
	uint64_t len;
	uint32_t got;

	GET(ember_cur_uleb(p, end, &len), d, "attribute set");
	GET(!len || len > PSTORE_MAX_ATTRS_LEN || len > (uint64_t)(end - *p) ||
		    memchr(*p, 0, len) ? -1 : 0, d, "attribute set");
	EMBER_FORWARD_IF_ERROR(pstore_linktab_attrs(t, (const char *)*p, len, SIZE_MAX, &got));
	GET(got != id ? -1 : 0, d, "attribute set repeated");
	*p += len;
	return 0;
}

int pstore_block_decode_links(const uint8_t *p, size_t len, struct pstore_bdata *b,
			      struct ember_diag *d)
{
	const uint8_t *end = p + len;
	uint64_t m, n;

	GET(ember_cur_uleb(&p, end, &m), d, "attribute sets");
	GET(m > (uint64_t)(end - p) || m > PSTORE_MAX_ATTR_SETS ? -1 : 0, d, "attribute sets");
	for (uint64_t i = 1; i <= m; i++)
		EMBER_FORWARD_IF_ERROR(decode_attrs(&p, end, &b->links, (uint32_t)i, d));
	GET(ember_cur_uleb(&p, end, &n), d, "links");
	GET(n > (uint64_t)(end - p) / 25 || n >= UINT32_MAX ? -1 : 0, d, "links");
	for (uint64_t i = 0; i < n; i++) {
		struct pstore_link l;
		uint32_t id;

		GET(end - p < 24 ? -1 : 0, d, "link");
		ember_memcpy(l.trace, p, 16);
		ember_memcpy(l.span, p + 16, 8);
		p += 24;
		GET(pstore_get_u32max(&p, end, (uint32_t)m, &l.attrs), d, "link's attribute set");
		EMBER_FORWARD_IF_ERROR(pstore_linktab_intern(&b->links, &l, &id));
		GET(id != i + 1 ? -1 : 0, d, "link repeated");
	}
	GET(p != end ? -1 : 0, d, "links");
	return 0;
}

const struct pstore_stream *pstore_link_stream(const struct pstore_bdata *b,
					       const struct pstore_seriestab *t, uint32_t s)
{
	const struct pstore_stream *st;

	if (!b->linked || b->series_stream.v[s] == UINT32_MAX)
		return NULL;
	st = &b->streams.v[b->series_stream.v[s] + 1 + t->series.v[s].ntypes];
	return st->raw ? st : NULL;
}
