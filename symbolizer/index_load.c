/*
 * index_load.c - mapping a saved index (index_file.h,
 * docs/symbol-index-format.md).  Each check that refuses a file says
 * which it is (struct ember_diag), for the caller's log.
 *
 * Loading maps the file read-only and checks the header and directory:
 * the magic, the version, the byte order, the header's CRC, every
 * section inside the file, aligned and of the expected record size, the
 * string table NUL-terminated at both ends.  The arrays are then used in
 * place.  The body's CRC is checked only on request (SYM_LOAD_VERIFY):
 * it costs a read of every page, and lookups stay inside the arrays
 * whatever they hold (ids and offsets are checked where they are read).
 */
#include "index_file.h"
#include "sym_internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

static uint32_t crc_of(const void *p, uint64_t len)
{
	const unsigned char *b = p;
	uLong crc = crc32(0, NULL, 0);

	while (len) {
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;

		crc = crc32(crc, b, n);
		b += n;
		len -= n;
	}
	return (uint32_t)crc;
}

static const uint32_t sect_elem[SYM_SECT_COUNT] = {
	[SYM_SECT_STRTAB] = 1,
	[SYM_SECT_NAMES] = 4,
	[SYM_SECT_NODES] = sizeof(struct sym_node),
	[SYM_SECT_SEG_START] = 8,
	[SYM_SECT_SEGS] = sizeof(struct sym_seg),
	[SYM_SECT_BUCKETS] = 4,
	[SYM_SECT_SYMTAB] = sizeof(struct sym_symbol),
	[SYM_SECT_SYMTAB_ADDR] = 8,
	[SYM_SECT_DYNSYM] = sizeof(struct sym_symbol),
	[SYM_SECT_DYNSYM_ADDR] = 8,
	[SYM_SECT_LOADS] = sizeof(struct sym_load),
	[SYM_SECT_DEBUG_PATH] = 1,
};

static int check_header(const struct sym_file_header *h, uint64_t size,
			struct ember_diag *d)
{
	struct sym_file_header copy;

	EMBER_FAIL_IF(size < sizeof(*h), d, -SYM_ERR_BAD_INDEX,
		      "%llu bytes: shorter than the header (%zu)",
		      (unsigned long long)size, sizeof(*h));
	EMBER_FAIL_IF(memcmp(h->magic, SYM_FILE_MAGIC, sizeof(h->magic)), d,
		      -SYM_ERR_BAD_INDEX, "no " SYM_FILE_MAGIC " magic: not a symbol index");
	EMBER_FAIL_IF(h->version != SYM_FILE_VERSION, d, -SYM_ERR_INDEX_VERSION,
		      "format version %u, this build reads %u", h->version,
		      SYM_FILE_VERSION);
	EMBER_FAIL_IF(h->byte_order != SYM_FILE_BYTE_ORDER, d, -SYM_ERR_BAD_INDEX,
		      "byte-order mark 0x%08x: written on another byte order",
		      h->byte_order);
	EMBER_FAIL_IF(h->header_size != sizeof(*h) || h->nsections != SYM_SECT_COUNT,
		      d, -SYM_ERR_BAD_INDEX, "header of %u bytes and %u sections, not %zu and %u",
		      h->header_size, h->nsections, sizeof(*h), SYM_SECT_COUNT);
	EMBER_FAIL_IF(h->file_size != size, d, -SYM_ERR_BAD_INDEX,
		      "the header says %llu bytes, the file has %llu",
		      (unsigned long long)h->file_size, (unsigned long long)size);
	copy = *h;
	copy.header_crc = 0;
	EMBER_FAIL_IF(crc_of(&copy, sizeof(copy)) != h->header_crc, d, -SYM_ERR_BAD_INDEX,
		      "header checksum mismatch");
	EMBER_FAIL_IF(h->build_id_len > sizeof(h->build_id), d, -SYM_ERR_BAD_INDEX,
		      "build ID of %u bytes", h->build_id_len);
	EMBER_FAIL_IF(h->bucket_shift > 63, d, -SYM_ERR_BAD_INDEX,
		      "bucket shift %u", h->bucket_shift);
	return 0;
}

/* Directory entry i: its kind, record size, alignment, place. */
static int check_entry(const struct sym_file_header *h, unsigned i, struct ember_diag *d)
{
	const struct sym_file_sect_entry *e = &h->sect[i];

	EMBER_FAIL_IF(e->kind != i || e->elem_size != sect_elem[i], d, -SYM_ERR_BAD_INDEX,
		      "section %u: kind %u of %u-byte records, not %u of %u", i,
		      e->kind, e->elem_size, i, sect_elem[i]);
	EMBER_FAIL_IF(e->offset % SYM_FILE_ALIGN || e->offset < sizeof(*h) ||
			      e->offset > h->file_size,
		      d, -SYM_ERR_BAD_INDEX, "section %u: offset 0x%llx misplaced", i,
		      (unsigned long long)e->offset);
	EMBER_FAIL_IF(e->count >= SYM_NONE ||
			      e->count > (h->file_size - e->offset) / e->elem_size,
		      d, -SYM_ERR_BAD_INDEX, "section %u: %llu records run past the file", i,
		      (unsigned long long)e->count);
	return 0;
}

static int check_sections(const struct sym_file_header *h, const uint8_t *base,
			  struct ember_diag *d)
{
	const struct sym_file_sect_entry *st = &h->sect[SYM_SECT_STRTAB];
	const struct sym_file_sect_entry *dp = &h->sect[SYM_SECT_DEBUG_PATH];

	for (unsigned i = 0; i < SYM_SECT_COUNT; i++)
		EMBER_FORWARD_IF_ERROR(check_entry(h, i, d));
	EMBER_FAIL_IF(st->count == 0 || base[st->offset] != 0 ||
			      base[st->offset + st->count - 1] != 0,
		      d, -SYM_ERR_BAD_INDEX, "string table not NUL-terminated at both ends");
	EMBER_FAIL_IF(dp->count == 0 || base[dp->offset + dp->count - 1] != 0, d,
		      -SYM_ERR_BAD_INDEX, "debug path not NUL-terminated");
	EMBER_FAIL_IF(h->sect[SYM_SECT_SEGS].count != h->sect[SYM_SECT_SEG_START].count ||
			      h->sect[SYM_SECT_SYMTAB].count != h->sect[SYM_SECT_SYMTAB_ADDR].count ||
			      h->sect[SYM_SECT_DYNSYM].count != h->sect[SYM_SECT_DYNSYM_ADDR].count,
		      d, -SYM_ERR_BAD_INDEX, "paired sections of different lengths");
	EMBER_FAIL_IF(h->sect[SYM_SECT_BUCKETS].count && !h->sect[SYM_SECT_SEGS].count, d,
		      -SYM_ERR_BAD_INDEX, "buckets without segments");
	return 0;
}

#define SECT(base, h, k) ((void *)((base) + (h)->sect[k].offset))

/* The index's arrays in place in the mapping at base. */
static int index_from_map(struct sym_index *idx, const struct sym_file_header *h,
			  uint8_t *base)
{
	const char *dbg = SECT(base, h, SYM_SECT_DEBUG_PATH);

	idx->strtab.data = SECT(base, h, SYM_SECT_STRTAB);
	idx->strtab.len = h->sect[SYM_SECT_STRTAB].count;
	idx->names = SECT(base, h, SYM_SECT_NAMES);
	idx->nnames = h->sect[SYM_SECT_NAMES].count;
	idx->nodes = SECT(base, h, SYM_SECT_NODES);
	idx->nnodes = h->sect[SYM_SECT_NODES].count;
	idx->nfunctions = h->nfunctions;
	idx->ninlined = h->ninlined;
	idx->seg_start = SECT(base, h, SYM_SECT_SEG_START);
	idx->segs = SECT(base, h, SYM_SECT_SEGS);
	idx->nsegs = h->sect[SYM_SECT_SEGS].count;
	idx->buckets = h->sect[SYM_SECT_BUCKETS].count ? SECT(base, h, SYM_SECT_BUCKETS) : NULL;
	idx->nbuckets = h->sect[SYM_SECT_BUCKETS].count;
	idx->bucket_shift = h->bucket_shift;
	idx->symtab = SECT(base, h, SYM_SECT_SYMTAB);
	idx->symtab_addr = SECT(base, h, SYM_SECT_SYMTAB_ADDR);
	idx->nsymtab = h->sect[SYM_SECT_SYMTAB].count;
	idx->dynsym = SECT(base, h, SYM_SECT_DYNSYM);
	idx->dynsym_addr = SECT(base, h, SYM_SECT_DYNSYM_ADDR);
	idx->ndynsym = h->sect[SYM_SECT_DYNSYM].count;
	idx->loads = SECT(base, h, SYM_SECT_LOADS);
	idx->nloads = h->sect[SYM_SECT_LOADS].count;
	idx->symtab_in_debug = h->symtab_in_debug != 0;
	idx->seg_source = h->seg_source;
	idx->build_id_len = h->build_id_len;
	memcpy(idx->build_id, h->build_id, h->build_id_len);
	if (*dbg && !(idx->debug_path = strdup(dbg)))
		return -ENOMEM;
	if (idx->nnames &&
	    !(idx->demangled = calloc(2 * idx->nnames, sizeof(*idx->demangled))))
		return -ENOMEM;
	return 0;
}

static int map_file(int fd, void **map, size_t *size, struct ember_diag *d)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	EMBER_FAIL_IF(!S_ISREG(st.st_mode), d, -EINVAL, "not a regular file");
	EMBER_FAIL_IF((uint64_t)st.st_size < sizeof(struct sym_file_header), d,
		      -SYM_ERR_BAD_INDEX, "%llu bytes: shorter than the header (%zu)",
		      (unsigned long long)st.st_size, sizeof(struct sym_file_header));
	*size = (size_t)st.st_size;
	*map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	return *map == MAP_FAILED ? -errno : 0;
}

/* The header, the directory and, with SYM_LOAD_VERIFY, the body's CRC. */
static int check_file(const uint8_t *map, size_t size, unsigned flags,
		      struct ember_diag *d)
{
	const struct sym_file_header *h = (const void *)map;

	EMBER_FORWARD_IF_ERROR(check_header(h, size, d));
	EMBER_FORWARD_IF_ERROR(check_sections(h, map, d));
	EMBER_FAIL_IF((flags & SYM_LOAD_VERIFY) &&
			      crc_of(map + sizeof(*h), size - sizeof(*h)) != h->body_crc,
		      d, -SYM_ERR_BAD_INDEX, "body checksum mismatch");
	return 0;
}

struct sym_index *sym_index_load_diag(int fd, unsigned flags, struct ember_diag *d,
				      int *err)
{
	struct sym_index *idx = NULL;
	void *map = NULL;
	size_t size = 0;
	int e = map_file(fd, &map, &size, d);

	if (!e)
		e = check_file(map, size, flags, d);
	if (!e && !(idx = calloc(1, sizeof(*idx))))
		e = -ENOMEM;
	if (e)
		goto fail;
	idx->file_map = map;
	idx->file_map_size = size;
	map = NULL;
	e = index_from_map(idx, idx->file_map, idx->file_map);
	if (!e)
		return idx;
fail:
	if (map && map != MAP_FAILED)
		munmap(map, size);
	sym_index_free(idx);
	if (err)
		*err = e;
	return NULL;
}

struct sym_index *sym_index_load(int fd, unsigned flags, int *err)
{
	return sym_index_load_diag(fd, flags, NULL, err);
}
