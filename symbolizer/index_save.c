/*
 * index_save.c - writing a built index in the on-disk format
 * (index_file.h, docs/symbol-index-format.md).
 *
 * Two passes over the same bytes: the first computes the body's CRC (the
 * header, which comes first, carries it), the second writes.  Both emit
 * the body through one function, so what is summed is what is written.
 * The output is deterministic: padding and struct holes are zeros.
 */
#include "index_file.h"
#include "sym_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <zlib.h>

_Static_assert(sizeof(struct sym_file_header) % 8 == 0, "header size");
_Static_assert(sizeof(struct sym_node) == 48 && offsetof(struct sym_node, entry) == 40,
	       "struct sym_node is the file's node record");
_Static_assert(sizeof(struct sym_seg) == 16, "struct sym_seg is the file's segment");
_Static_assert(sizeof(struct sym_symbol) == 24, "struct sym_symbol is the file's symbol");
_Static_assert(sizeof(struct sym_load) == 32, "struct sym_load is the file's load");

/* Where the body goes: summed, or summed and written. */
struct save_sink {
	sym_write_fn write;	/* NULL: only sum */
	void *arg;
	uint64_t at;		/* bytes emitted (from the start of the file) */
	uLong crc;
};

static int sink_put(struct save_sink *k, const void *data, size_t len)
{
	const unsigned char *p = data;

	k->at += len;
	while (len) { /* zlib takes uInt lengths */
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;

		k->crc = crc32(k->crc, p, n);
		p += n;
		len -= n;
	}
	return k->write ? k->write(k->arg, data, (size_t)(p - (const unsigned char *)data)) : 0;
}

static int sink_pad_to(struct save_sink *k, uint64_t off)
{
	static const uint8_t zeros[SYM_FILE_ALIGN];

	return off > k->at ? sink_put(k, zeros, (size_t)(off - k->at)) : 0;
}

struct sect_src {
	const void *data;
	size_t elem, count;
};

static void sect_sources(const struct sym_index *idx, struct sect_src *s)
{
	s[SYM_SECT_STRTAB] = (struct sect_src){ idx->strtab.data, 1, idx->strtab.len };
	s[SYM_SECT_NAMES] = (struct sect_src){ idx->names, 4, idx->nnames };
	s[SYM_SECT_NODES] = (struct sect_src){ idx->nodes, sizeof(struct sym_node), idx->nnodes };
	s[SYM_SECT_SEG_START] = (struct sect_src){ idx->seg_start, 8, idx->nsegs };
	s[SYM_SECT_SEGS] = (struct sect_src){ idx->segs, sizeof(struct sym_seg), idx->nsegs };
	s[SYM_SECT_BUCKETS] = (struct sect_src){ idx->buckets, 4, idx->nbuckets };
	s[SYM_SECT_SYMTAB] = (struct sect_src){ idx->symtab, sizeof(struct sym_symbol),
						idx->nsymtab };
	s[SYM_SECT_SYMTAB_ADDR] = (struct sect_src){ idx->symtab_addr, 8, idx->nsymtab };
	s[SYM_SECT_DYNSYM] = (struct sect_src){ idx->dynsym, sizeof(struct sym_symbol),
						idx->ndynsym };
	s[SYM_SECT_DYNSYM_ADDR] = (struct sect_src){ idx->dynsym_addr, 8, idx->ndynsym };
	s[SYM_SECT_LOADS] = (struct sect_src){ idx->loads, sizeof(struct sym_load), idx->nloads };
	s[SYM_SECT_DEBUG_PATH] = (struct sect_src){ idx->debug_path ? idx->debug_path : "", 1,
						    strlen(idx->debug_path ? idx->debug_path : "") + 1 };
}

/* Nodes with their hole (after call/decl fields, before entry) zeroed. */
static int put_nodes(struct save_sink *k, const struct sym_node *v, size_t n)
{
	struct sym_node buf[256];

	for (size_t i = 0; i < n;) {
		size_t m = n - i < 256 ? n - i : 256;

		memset(buf, 0, sizeof(buf[0]) * m);
		for (size_t j = 0; j < m; j++) {
			const struct sym_node *s = &v[i + j];

			buf[j].name = s->name;
			buf[j].short_name = s->short_name;
			buf[j].parent = s->parent;
			buf[j].call_file = s->call_file;
			buf[j].call_line = s->call_line;
			buf[j].call_col = s->call_col;
			buf[j].call_disc = s->call_disc;
			buf[j].decl_file = s->decl_file;
			buf[j].decl_line = s->decl_line;
			buf[j].entry = s->entry;
		}
		int err = sink_put(k, buf, sizeof(buf[0]) * m);

		if (err)
			return err;
		i += m;
	}
	return 0;
}

static int emit_body(struct save_sink *k, const struct sym_file_header *h,
		     const struct sect_src *src)
{
	int err = 0;

	for (unsigned i = 0; i < SYM_SECT_COUNT && !err; i++) {
		err = sink_pad_to(k, h->sect[i].offset);
		if (err)
			break;
		if (i == SYM_SECT_NODES)
			err = put_nodes(k, src[i].data, src[i].count);
		else if (src[i].count)
			err = sink_put(k, src[i].data, src[i].elem * src[i].count);
	}
	return err ? err : sink_pad_to(k, h->file_size);
}

static void header_fill(const struct sym_index *idx, const struct sect_src *src,
			struct sym_file_header *h)
{
	uint64_t off = sizeof(*h);

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, SYM_FILE_MAGIC, sizeof(h->magic));
	h->version = SYM_FILE_VERSION;
	h->byte_order = SYM_FILE_BYTE_ORDER;
	h->header_size = sizeof(*h);
	h->nsections = SYM_SECT_COUNT;
	h->nfunctions = idx->nfunctions;
	h->ninlined = idx->ninlined;
	h->bucket_shift = idx->bucket_shift;
	h->seg_source = idx->seg_source;
	h->symtab_in_debug = idx->symtab_in_debug;
	h->build_id_len = (uint8_t)idx->build_id_len;
	memcpy(h->build_id, idx->build_id, idx->build_id_len);
	for (unsigned i = 0; i < SYM_SECT_COUNT; i++) {
		off = (off + SYM_FILE_ALIGN - 1) & ~(uint64_t)(SYM_FILE_ALIGN - 1);
		h->sect[i] = (struct sym_file_sect_entry){ i, (uint32_t)src[i].elem, off,
							   src[i].count };
		off += src[i].elem * src[i].count;
	}
	h->file_size = (off + SYM_FILE_ALIGN - 1) & ~(uint64_t)(SYM_FILE_ALIGN - 1);
}

int sym_index_save(const struct sym_index *idx, sym_write_fn write, void *arg)
{
	struct sect_src src[SYM_SECT_COUNT];
	struct sym_file_header h;
	struct save_sink sum = { .crc = crc32(0, NULL, 0), .at = sizeof(h) };
	struct save_sink out = { .write = write, .arg = arg, .crc = crc32(0, NULL, 0) };
	int err;

	if (idx->build_id_len > sizeof(h.build_id))
		return -EINVAL;
	sect_sources(idx, src);
	header_fill(idx, src, &h);
	err = emit_body(&sum, &h, src);
	if (err)
		return err;
	h.body_crc = (uint32_t)sum.crc;
	h.header_crc = (uint32_t)crc32(crc32(0, NULL, 0), (const Bytef *)&h, sizeof(h));
	err = sink_put(&out, &h, sizeof(h));
	return err ? err : emit_body(&out, &h, src);
}
