/*
 * pstore_block.h - the block format (docs/profile-store-format.md
 * "Block"): one partition's profiles as an immutable, content-named file.
 *
 *   block_name.c    blocks named by sha256; puts read back and compared
 *   block_encode.c  a partition's profiles -> block bytes
 *   block_rows.c    the row streams of a series: encode, decode, sum
 *   frame_table.c   where a framed block's frames lie, learnt as read
 *   block_decode.c  block bytes -> header, meta, series, dictionary
 *
 * Invariants: a block's name is its partition and the sha256 of its bytes,
 * so a name that exists holds those bytes; every section is checked
 * against its hash before it is decoded; a block's data (struct
 * pstore_bdata) is read-only once built.  Decoders take outside bytes and
 * answer -PSTORE_ERR_CORRUPT, never read past what they were given.
 */
#ifndef EMBER_PSTORE_BLOCK_H
#define EMBER_PSTORE_BLOCK_H

#include "pstore_series.h"

/* ---- blocks (block_encode.c, block_decode.c, block_rows.c) ------------- */

#define PS_BLOCK_MAGIC "EMBPSTB1"
/* Version 1: no sample links; 2: version 1 with a LINKS section and a
 * link stream per series; 3 (written now): each row stream is a zstd
 * frame per PS_FRAME_PROFILES profiles of its series, so a query decodes
 * only the profiles near its range, and LINKS and the link streams are
 * there exactly when a row has a link (the version no longer says so). */
#define PS_BLOCK_VERSION 1
#define PS_BLOCK_VERSION_LINKS 2
#define PS_BLOCK_VERSION_FRAMES 3
#define PS_FRAME_PROFILES 16
#define PS_BLOCK_HEADER 64
#define PS_SECTION_ENTRY 40
#define PS_BLOCK_MAX_SECTIONS 64
#define PS_SECTION_MAX_RAW ((uint64_t)1 << 31) /* 2 GiB decoded per section */

enum pstore_section_kind {
	PS_SEC_META = 1,	/* parents, log coverage, counts */
	PS_SEC_SERIES_STRINGS,	/* strings of the series table */
	PS_SEC_SERIES,		/* types and series */
	PS_SEC_LABELS,		/* label index */
	PS_SEC_PROFILES,	/* profile rows: series, time, totals, coverage */
	PS_SEC_STRINGS,		/* the dictionary's strings */
	PS_SEC_FUNCTIONS,
	PS_SEC_MAPPINGS,
	PS_SEC_LOCATIONS,
	PS_SEC_NODES,
	PS_SEC_STREAMS,		/* the row streams' directory */
	PS_SEC_ROWS,		/* the row streams (zstd frames, raw section) */
	PS_SEC_REQUIRED_MAX = PS_SEC_ROWS, /* 1..this in every block */
	PS_SEC_LOCATION_TYPES,	/* optional: the locations' frame types (absent: none) */
	PS_SEC_LINKS,		/* 14, version 2 (required) and 3: the links rows name */
	PS_SEC_ROLLUP,		/* 15, a rollup's only (rollup.c): step, sources, counts */
	PS_SEC_KIND_MAX,
};

struct pstore_section {
	uint32_t kind, codec; /* codec 0: raw, 1: zstd */
	uint64_t off, stored, raw, hash;
};

/* Which log segments a block holds: [lo, hi] of writer. */
struct pstore_walrange {
	uint8_t writer[16];
	uint64_t lo, hi;
};

EMBER_VEC_DEF(pstore_walranges, struct pstore_walrange);

struct pstore_block_meta {
	int64_t min_time, max_time, partition, partition_ns;
	uint32_t version;		/* PS_BLOCK_VERSION, _LINKS or _FRAMES */
	struct pstore_strs parents;	/* names of the blocks this one replaces */
	struct pstore_walranges wal;
	uint64_t profiles, rows, series;
	/* a rollup (PS_SEC_ROLLUP; 0: a block of full resolution): its step,
	 * the profiles it sums and the names of the blocks it sums them of */
	int64_t rollup_step;
	uint64_t rollup_profiles;
	struct pstore_strs sources;
	struct pstore_section sec[PS_SEC_KIND_MAX];
	bool has[PS_SEC_KIND_MAX];
};

void pstore_block_meta_release(struct pstore_block_meta *m);
/* Whether a block's rows have links (LINKS and a link stream a series),
 * and whether its row streams are framed by PS_FRAME_PROFILES profiles. */
static inline bool pstore_meta_linked(const struct pstore_block_meta *m)
{
	return m->version == PS_BLOCK_VERSION_LINKS ||
	       (m->version == PS_BLOCK_VERSION_FRAMES && m->has[PS_SEC_LINKS]);
}

static inline bool pstore_meta_framed(const struct pstore_block_meta *m)
{
	return m->version == PS_BLOCK_VERSION_FRAMES;
}

/* A stream of a series' rows. */
enum pstore_stream_kind {
	PS_STREAM_STACKS = 0,	/* node deltas per profile */
	PS_STREAM_VALUES = 1,	/* zigzag(value / factor) */
	PS_STREAM_DERIVED = 2,	/* column ref times factor: no bytes */
	PS_STREAM_LINKS = 3,	/* version 2, last of a series: link id a row;
				 * no bytes when no row of the series has one */
};

struct pstore_stream {
	uint32_t kind, ref;
	int64_t factor;
	uint64_t off, stored, raw; /* inside the ROWS section */
};

EMBER_VEC_DEF(pstore_streams, struct pstore_stream);

/* What a rollup's profile (one series' profiles of one step) sums beyond
 * pstore_prof: how many profiles, and the time of the last (its time is
 * the first's). */
struct pstore_rollup_prof {
	uint64_t count;
	int64_t last;
};

/* Where a framed block's frames lie in its row streams (frame_table.c):
 * stream i's frame starts and end, off[first[i] ..= first[i + 1] - 1],
 * once state[i] says they are known. */
struct pstore_frames {
	uint32_t *first, *off;
	atomic_uchar *state;
	size_t n; /* streams (0: no table) */
};

/* A rollup's row streams decompressed when its data is loaded (one of
 * few profiles a series: the tiers of an hour and coarser), so that the
 * queries of long ranges, which read every rollup's rows, read and
 * decompress none (docs/performance-notes.md, "Edges read their frames;
 * coarse rollups kept decoded"):
 * stream i is data[off[i], off[i + 1]). */
struct pstore_rows_decoded {
	uint8_t *data;
	size_t *off; /* NULL: not decoded */
};

/* What a query needs of a block beyond its header: loaded lazily, kept
 * in the cache, read-only once built but for its frame table. */
struct pstore_bdata {
	atomic_int refs;
	size_t bytes;
	struct pmodel_dict dict;
	EMBER_VEC(struct pstore_prof) profs;
	EMBER_VEC(int64_t) totals;
	EMBER_VEC(struct pstore_cov) cov;
	struct pstore_streams streams;
	EMBER_VEC(uint32_t) series_stream; /* first stream of each series */
	EMBER_VEC(uint32_t) series_prof;	/* first profile of each series (n + 1) */
	struct pstore_linktab links;		/* the LINKS section (linked) */
	bool linked;				/* a link stream a series */
	bool framed;				/* version 3: PS_FRAME_PROFILES a frame */
	EMBER_VEC(struct pstore_rollup_prof) rollup; /* a rollup's: one a profile */
	/* a key a node under the cache's seed (cache.c): NULL in data
	 * loaded without the cache or without the dictionary */
	struct pmodel_stack_key *keys;
	struct pstore_frames frames;	/* a framed block's, learnt as read */
	struct pstore_rows_decoded decoded; /* a rollup's of few profiles a series */
};

struct pstore_bdata *pstore_bdata_ref(struct pstore_bdata *b);
void pstore_bdata_unref(struct pstore_bdata *b);

/* Input of the block encoder: one partition's profiles of a source
 * (head or merge staging), selected by prof index. */
struct pstore_block_src {
	const struct pmodel_dict *dict;
	const struct pstore_seriestab *series;
	const struct pstore_prof *profs;
	const uint32_t *sel; /* indexes into profs */
	size_t nsel;
	const uint32_t *row_node;
	const int64_t *row_val;
	const uint32_t *row_link;	   /* by prof->link_off (PS_NO_LINKS: none) */
	const struct pstore_linktab *links; /* what row_link's ids name */
	const int64_t *totals;
	const struct pstore_cov *cov;
	int64_t partition, partition_ns;
	char *const *parents;
	size_t nparents;
	const struct pstore_walrange *wal;
	size_t nwal;
	int zstd_level;
	/* a rollup (rollup_step > 0): what each profile sums (by profs
	 * index) and the blocks it was built from; named "rollups/..." */
	int64_t rollup_step;
	const struct pstore_rollup_prof *rollup;
	char *const *sources;
	size_t nsources;
};

/* Encode src into out (a whole block file) and its name into name
 * ("blocks/<partition hex>-<hash hex>.pblk"). */
#define PS_BLOCK_NAME_MAX 128 /* "blocks/" 16 hex "-" 64 hex ".pblk" */

/* block_name.c: "blocks/<partition>-<sha256 of data>.pblk" into name; and
 * a put that reads the object back whole: -PSTORE_ERR_CORRUPT when the
 * name holds other bytes (never taken as written), else the storage's
 * error, with d set. */
int pstore_block_name(int64_t partition, const void *data, size_t len,
		      char name[PS_BLOCK_NAME_MAX]);
/* The same under "rollups/" (a rollup: never listed with the blocks). */
static inline bool pstore_is_rollup_name(const char *name)
{
	return strncmp(name, "rollups/", 8) == 0;
}
int pstore_rollup_name(int64_t partition, const void *data, size_t len,
		       char name[PS_BLOCK_NAME_MAX]);
int pstore_block_put(const struct pstore_blockio *io, const char *name, const void *data,
		     size_t len, struct ember_diag *d);
int pstore_block_encode(const struct pstore_block_src *src, struct ember_buf *out,
		    char name[PS_BLOCK_NAME_MAX]);

/* Parse and check the header and section table of a block whose first
 * bytes are data[0..len) (at least the header and table, or all of it);
 * size is the whole file's.  -PSTORE_ERR_CORRUPT with d set. */
int pstore_block_header(const uint8_t *data, size_t len, uint64_t size,
		    struct pstore_block_meta *m, struct ember_diag *d);
/* Bytes of header + table, once the first PS_BLOCK_HEADER are known. */
int pstore_block_header_len(const uint8_t *data, size_t len, size_t *need, struct ember_diag *d);
/* Decode the stored bytes of section kind (checked against its hash,
 * decompressed) into out. */
int pstore_block_section(const struct pstore_block_meta *m, enum pstore_section_kind kind,
		     const uint8_t *stored, size_t len, struct ember_buf *out,
		     struct ember_diag *d);
/* Decode the META, SERIES_STRINGS, SERIES, LABELS sections. */
int pstore_block_decode_meta(const uint8_t *data, size_t len, struct pstore_block_meta *m,
			 struct ember_diag *d);
int pstore_block_decode_series(const uint8_t *strs, size_t slen, const uint8_t *ser,
			   size_t len, struct pstore_seriestab *t, struct ember_diag *d);
int pstore_block_decode_labels(const uint8_t *data, size_t len, const struct pstore_seriestab *t,
			   struct pstore_lindex *ix, struct ember_diag *d);
/* The dictionary sections, PROFILES and STREAMS into b (checked against
 * the series table t). */
int pstore_block_decode_dict(const uint8_t *const sec[PS_SEC_KIND_MAX],
			 const size_t len[PS_SEC_KIND_MAX], struct pmodel_dict *dict,
			 struct ember_diag *d);
int pstore_block_decode_profiles(const uint8_t *data, size_t len, const struct pstore_seriestab *t,
			     const struct pstore_block_meta *m, struct pstore_bdata *b,
			     struct ember_diag *d);
int pstore_block_decode_streams(const uint8_t *data, size_t len, const struct pstore_seriestab *t,
			    const struct pstore_block_meta *m, struct pstore_bdata *b,
			    struct ember_diag *d);

/* Row streams of one series (block_rows.c): its profiles' rows, in
 * profile order, as one stream of node deltas and one stream per column,
 * each appended to rows as a zstd frame per PS_FRAME_PROFILES profiles
 * (version 3). */
struct pstore_rows_in {
	const struct pstore_prof *const *profs; /* of one series, in time order */
	size_t nprofs;
	const uint32_t *row_node;	    /* indexed by prof->row_off */
	const int64_t *row_val;		    /* by prof->val_off, ncols a row */
	const uint32_t *node_map;	    /* source node -> block node */
	uint32_t ncols;
	void *cctx;			    /* ZSTD_CCtx, level set */
	/* a linked block's (NULL: no link stream): the rows' links
	 * (by prof->link_off), the source's table, the block's table they
	 * are interned into and the map of source ids to its ids (filled as
	 * met, UINT32_MAX unset) */
	const uint32_t *row_link;
	const struct pstore_linktab *src_links;
	struct pstore_linktab *links;
	uint32_t *link_map;
};
int pstore_rows_encode(const struct pstore_rows_in *in, struct ember_buf *rows,
		   struct pstore_streams *streams);
/* Decompress stream st's stored bytes (stored[0..len): its frames) into
 * out, with the caller's zstd context dctx (reused across streams: making
 * one costs more than decompressing a small stream) or, NULL, one made
 * for it: every frame, exactly st->raw bytes.  _frames: only frames
 * [f0, f1) of a framed stream (f1 SIZE_MAX: to the end; 0 to SIZE_MAX is
 * pstore_stream_load), the frames before skipped by their headers (out
 * holds their rows alone); at most st->raw bytes in all. */
struct ZSTD_DCtx_s;
int pstore_stream_load(const struct pstore_stream *st, const uint8_t *stored, size_t len,
		   struct ZSTD_DCtx_s *dctx, struct ember_buf *out, struct ember_diag *d);
int pstore_stream_load_frames(const struct pstore_stream *st, const uint8_t *stored, size_t len,
			      size_t f0, size_t f1, struct ZSTD_DCtx_s *dctx,
			      struct ember_buf *out, struct ember_diag *d);
/* Every frame of part[0..len), whole frames of stream st's bytes (where
 * a frame table says they lie), into out: at most st->raw bytes. */
int pstore_stream_load_part(const struct pstore_stream *st, const uint8_t *part, size_t len,
			    struct ZSTD_DCtx_s *dctx, struct ember_buf *out,
			    struct ember_diag *d);

/* Stream si of bd as decoded when bd was loaded, [*p, *p + *len), read
 * in place (block_catalog.c); false: bd's rows are not kept decoded. */
bool pstore_rows_decoded_get(const struct pstore_bdata *bd, size_t si, const uint8_t **p,
			     size_t *len);

/* A framed block's frame table (frame_table.c), sized at load (a data
 * without frames or with too many: none, n 0).  _learn: stream si's
 * whole stored bytes walked frame by frame once (its first reader's; a
 * stream that holds other frames than its profiles say stays unknown);
 * _span: where its frames [f0, f1) lie in it, [*a, *z), once known (f1
 * past its last: to its end); false: not known, or none or every frame
 * asked (the whole stream is read as such). */
int pstore_frames_init(struct pstore_frames *ft, const struct pstore_bdata *bd);
void pstore_frames_release(struct pstore_frames *ft);
size_t pstore_frames_bytes(const struct pstore_frames *ft);
void pstore_frames_learn(struct pstore_frames *ft, size_t si, const uint8_t *stored, size_t len);
bool pstore_frames_span(const struct pstore_frames *ft, size_t si, size_t f0, size_t f1,
			uint64_t *a, uint64_t *z);

/* Sum one column of the profiles [p_first, p_end) of a series whose time
 * lies in [from, to) into self[] (nnodes), from the decompressed stacks
 * and values streams; values are multiplied by factor.  Matching
 * profiles are noted in r (NULL: not noted).  A series' profiles are in
 * time order (the decoder refuses a block where they are not), so the
 * rows after the first profile past the range are not read.
 * -PSTORE_ERR_CORRUPT when a stream runs out or names a node past
 * nnodes. */
struct pstore_sum_in {
	const struct pstore_prof *profs;
	size_t p_first, p_end;
	int64_t from, to;
	const uint8_t *stacks, *stacks_end;
	const uint8_t *vals, *vals_end;
	int64_t factor;
	uint32_t nnodes;
	struct pmodel_result *r;
	/* a link filter: only rows whose link id l has want[l] (l <= nlinks,
	 * from the link stream); want NULL: every row */
	const uint8_t *want;
	const uint8_t *links, *links_end;
	uint32_t nlinks;
	/* with want: the block's links, and where the parts of the sums that
	 * rows with attributes gave go (NULL: the block has none) */
	const struct pstore_linktab *tab;
	struct pstore_attr_parts *parts;
	/* a rollup's counts by profile index (NULL: full resolution) */
	const struct pstore_rollup_prof *rollup;
	uint64_t *read; /* profiles in [from, to) read: counted here (NULL: not) */
};
int pstore_rows_sum(const struct pstore_sum_in *in, int64_t *self, struct ember_diag *d);
/* Every row of a series (compaction): nodes[nrows] from a stacks stream;
 * one column into vals[i * stride] from a values stream. */
int pstore_rows_decode_stacks(const uint8_t *p, const uint8_t *end, const struct pstore_prof *profs,
			  size_t p_first, size_t p_end, uint32_t nnodes, uint32_t *nodes,
			  struct ember_diag *d);
int pstore_rows_decode_values(const uint8_t *p, const uint8_t *end, uint64_t nrows,
			  int64_t factor, int64_t *vals, size_t stride, struct ember_diag *d);
/* nrows link ids (each at most nlinks) from a link stream into links. */
int pstore_rows_decode_links(const uint8_t *p, const uint8_t *end, uint64_t nrows,
			     uint32_t nlinks, uint32_t *links, struct ember_diag *d);
/* The ROLLUP section: its step and sources into m (b NULL, at open), or
 * its per-profile counts into b->rollup (checked against b->profs). */
int pstore_block_decode_rollup(const uint8_t *data, size_t len, struct pstore_block_meta *m,
			       struct pstore_bdata *b, struct ember_diag *d);
/* The LINKS section into b->links. */
int pstore_block_decode_links(const uint8_t *data, size_t len, struct pstore_bdata *b,
			      struct ember_diag *d);
/* A series' link stream, or NULL: the block has none, or no row of
 * series s has a link. */
const struct pstore_stream *pstore_link_stream(const struct pstore_bdata *b,
					       const struct pstore_seriestab *t, uint32_t s);

#endif /* EMBER_PSTORE_BLOCK_H */
