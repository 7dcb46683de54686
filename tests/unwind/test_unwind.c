/*
 * test_unwind.c - unit tests of unwind-compiler/.  CFI sections are built
 * byte by byte here (struct cfi below), so every expected row follows
 * from the bytes of the test, not from the code under test; the ELF
 * cases read the fixtures ($EMBER_FIXTURES_DIR, and libcfi_cases.so from
 * $EMBER_UNWIND_FIXTURES) with libelf directly for their expectations.
 * The row-by-row comparison against GNU readelf is test_readelf.py.
 */
#include "unwind.h"
#include "unwind_internal.h" /* sections in, the cursor readers */
#include "common.h"
#include "unit.h"
#include "craft_elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- building CFI sections ------------------------------------------------ */

#define SEC_VADDR 0x400
#define CIE_DAF (-8)

/* DW_CFA_* with one-byte operands, for readable programs */
#define ADV(n) (0x40 | (n))
#define OFFSET(reg, n) (0x80 | (reg)), (n)
#define DEF_CFA(reg, off) 0x0c, (reg), (off)
#define DEF_CFA_OFFSET(off) 0x0e, (off)
#define DEF_CFA_REGISTER(reg) 0x0d, (reg)
#define REMEMBER 0x0a
#define RESTORE_STATE 0x0b
#define UNDEFINED(reg) 0x07, (reg)
#define RSP 7
#define RBP 6
#define RIP 16

struct cfi {
	uint8_t b[16384];
	size_t n;
	bool eh;		/* .eh_frame, else .debug_frame */
};

static void put(struct cfi *c, const void *p, size_t n)
{
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

static void put_u32(struct cfi *c, uint32_t v)
{
	put(c, &v, 4);
}

static void put_u64(struct cfi *c, uint64_t v)
{
	put(c, &v, 8);
}

static void put_u8(struct cfi *c, uint8_t v)
{
	put(c, &v, 1);
}

/* Pad with DW_CFA_nop to 8 bytes and fill in the length at len_at. */
static void entry_end(struct cfi *c, size_t len_at)
{
	uint32_t len;

	while ((c->n - len_at) % 8)
		put_u8(c, 0);
	len = (uint32_t)(c->n - len_at - 4);
	memcpy(c->b + len_at, &len, 4);
}

/* A CIE: "zR" (pcrel sdata4) in .eh_frame, version 3 "" in .debug_frame;
 * code alignment 1, data alignment -8, RA column 16, initial rules
 * CFA = rsp + 8, RA at CFA - 8.  aug may add 'S'. */
static size_t cfi_cie(struct cfi *c, const char *aug)
{
	static const uint8_t init[] = { DEF_CFA(RSP, 8), OFFSET(RIP, 1) };
	size_t at = c->n;

	put_u32(c, 0);
	put_u32(c, c->eh ? 0 : 0xffffffffu);
	put_u8(c, c->eh ? 1 : 3);
	put(c, aug, strlen(aug) + 1);
	put_u8(c, 1);				/* code alignment */
	put_u8(c, 0x78);			/* data alignment -8 (sleb) */
	put_u8(c, RIP);
	if (aug[0] == 'z') {
		put_u8(c, 1);
		put_u8(c, 0x1b);		/* DW_EH_PE_pcrel | sdata4 */
	}
	put(c, init, sizeof(init));
	entry_end(c, at);
	return at;
}

static void cfi_fde(struct cfi *c, size_t cie, uint64_t start, uint32_t len,
		    const uint8_t *ins, size_t n)
{
	size_t at = c->n;

	put_u32(c, 0);
	put_u32(c, c->eh ? (uint32_t)(c->n - cie) : (uint32_t)cie);
	if (c->eh) {
		put_u32(c, (uint32_t)(start - (SEC_VADDR + c->n)));
		put_u32(c, len);
		put_u8(c, 0);			/* augmentation data length */
	} else {
		put_u64(c, start);
		put_u64(c, len);
	}
	put(c, ins, n);
	entry_end(c, at);
}

static void input_init(struct unwind_input *in, uint16_t machine)
{
	memset(in, 0, sizeof(*in));
	in->machine = machine;
	in->addr_size = 8;
	in->code_hi = UINT64_C(1) << 32;
}

static void input_set(struct unwind_input *in, const struct cfi *c)
{
	struct unwind_section *s = &in->sec[c->eh ? UNWIND_SEC_EH : UNWIND_SEC_DEBUG];

	s->data = c->b;
	s->size = c->n;
	s->vaddr = c->eh ? SEC_VADDR : 0;
	s->size_known = true;
}

static char err_msg[512];

static int compile(const struct unwind_input *in, struct ember_buf *table,
		   struct unwind_compile_stats *st)
{
	struct ember_diag d = { err_msg, sizeof(err_msg), false };
	struct unwind_compile_stats dummy;

	err_msg[0] = '\0';
	ember_buf_init(table, 1 << 24);
	return unwind_compile_input(in, &d, st ? st : &dummy, table);
}

/* Compile one section (.eh_frame or .debug_frame) of a binary for machine. */
static int compile_cfi(const struct cfi *c, uint16_t machine, struct ember_buf *table,
		       struct unwind_compile_stats *st)
{
	struct unwind_input in;

	input_init(&in, machine);
	input_set(&in, c);
	return compile(&in, table, st);
}

/* ---- reading the rows back ---------------------------------------------------- */

struct text {
	char s[8192];
	size_t n;
	uint16_t machine;
};

/* "1000 rsp 8 c-8 same\n": the dump line with a short pc */
static int text_row(const struct unwind_row *row, void *ctx)
{
	struct text *t = ctx;
	char line[128];
	int n = unwind_row_format(row, t->machine, line, sizeof(line));
	const char *rest = line + 16;

	if (n < 0)
		return n;
	t->n += (size_t)snprintf(t->s + t->n, sizeof(t->s) - t->n, "%" PRIx64 "%s\n",
				 row->pc, rest);
	return 0;
}

/* All rows of a table as text (empty string if the table does not open). */
static const char *rows_of(const struct ember_buf *table)
{
	static struct text t;
	struct unwind_table *b;
	int err;

	t.n = 0;
	t.s[0] = '\0';
	b = unwind_table_new(table->data, table->len, &err);
	if (!b)
		return "(table does not open)";
	t.machine = unwind_table_header(b)->machine;
	unwind_table_foreach_row(b, text_row, &t);
	unwind_table_free(b);
	return t.s;
}

/* Rule text at pc through unwind_table_lookup ("-ENOENT" when none). */
static const char *lookup_of(const struct ember_buf *table, uint64_t pc)
{
	static char line[128];
	struct unwind_table *b;
	struct unwind_row row;
	int err;

	b = unwind_table_new(table->data, table->len, &err);
	if (!b)
		return "(table does not open)";
	err = unwind_table_lookup(b, pc, &row);
	if (err)
		snprintf(line, sizeof(line), "%s", err == -ENOENT ? "-ENOENT" : "error");
	else
		unwind_row_format(&row, unwind_table_header(b)->machine, line, sizeof(line));
	unwind_table_free(b);
	return err ? line : line + 17; /* without the pc */
}

/* One FDE of .eh_frame under the standard CIE: its rows. */
static const char *rows_of_program(const uint8_t *ins, size_t n, uint32_t len,
				   struct ember_buf *table)
{
	static struct cfi c;
	size_t cie;

	c.n = 0;
	c.eh = true;
	cie = cfi_cie(&c, "zR");
	cfi_fde(&c, cie, 0x1000, len, ins, n);
	if (compile_cfi(&c, UNWIND_EM_X86_64, table, NULL))
		return err_msg;
	return rows_of(table);
}

/* ---- cursor -------------------------------------------------------------------- */

static int test_unwind__cursor_leb128(void)
{
	static const uint8_t u[] = { 0xe5, 0x8e, 0x26 }, s[] = { 0xc0, 0xbb, 0x78 };
	static const uint8_t big[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t over[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02 };
	static const uint8_t cut[] = { 0x80, 0x80 };
	const uint8_t *p;
	uint64_t v;
	int64_t sv;

	p = u;
	CHECK_INT(ember_cur_uleb(&p, u + 3, &v), ==, 0);
	CHECK_INT(v, ==, 624485);
	CHECK(p == u + 3);
	p = s;
	CHECK_INT(ember_cur_sleb(&p, s + 3, &sv), ==, 0);
	CHECK_INT(sv, ==, -123456);
	p = big;
	CHECK_INT(ember_cur_uleb(&p, big + 10, &v), ==, 0);
	CHECK(v == UINT64_MAX);
	p = over;
	CHECK_INT(ember_cur_uleb(&p, over + 10, &v), ==, -ERANGE);
	CHECK(p == over); /* no advance on failure */
	p = cut;
	CHECK_INT(ember_cur_uleb(&p, cut + 2, &v), ==, -ENODATA);
	CHECK_INT(ember_cur_sleb(&p, cut + 2, &sv), ==, -ENODATA);
	CHECK(p == cut);
	return 0;
}

static int test_unwind__cursor_encoded_pointers(void)
{
	static const uint8_t d[] = { 0xf0, 0xff, 0xff, 0xff, 0x34, 0x12 };
	struct unwind_ptr_ctx c = { d, 0x1000, 0, 8 };
	const uint8_t *p = d;
	uint64_t v;

	CHECK_INT(unwind_read_encoded(&p, d + 6, 0x1b, &c, &v), ==, 0); /* pcrel sdata4 */
	CHECK(v == 0x1000 - 16);
	CHECK_INT(unwind_read_encoded(&p, d + 6, 0x02, &c, &v), ==, 0); /* udata2 */
	CHECK(v == 0x1234);
	p = d;
	CHECK_INT(unwind_read_encoded(&p, d + 6, 0xff, &c, &v), ==, -ENOTSUP); /* omit */
	CHECK_INT(unwind_read_encoded(&p, d + 6, 0x9b, &c, &v), ==, -ENOTSUP); /* indirect */
	CHECK_INT(unwind_read_encoded(&p, d + 6, 0x3b, &c, &v), ==, -ENOTSUP); /* datarel, no base */
	CHECK_INT(unwind_read_encoded(&p, d + 3, 0x04, &c, &v), ==, -ENODATA);
	CHECK(p == d);
	return 0;
}

/* ---- rows of single FDEs ----------------------------------------------------------- */

static int test_unwind__push_pop_rows_merged(void)
{
	static const uint8_t ins[] = {
		ADV(1), DEF_CFA_OFFSET(16), OFFSET(RBP, 2),	/* push rbp */
		ADV(1), DEF_CFA_OFFSET(24),			/* push rbx */
		ADV(4), DEF_CFA_OFFSET(64),			/* sub $40,rsp */
		ADV(9), DEF_CFA_OFFSET(24),			/* add */
		ADV(1), DEF_CFA_OFFSET(16),			/* pop rbx */
		ADV(1), DEF_CFA_OFFSET(8),			/* pop rbp */
	};
	struct ember_buf table;
	struct unwind_compile_stats st;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x1000, 0x20, ins, sizeof(ins));
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, &st), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 c-16\n"
		  "1002 rsp 24 c-8 c-16\n"
		  "1006 rsp 64 c-8 c-16\n"
		  "100f rsp 24 c-8 c-16\n"
		  "1010 rsp 16 c-8 c-16\n"
		  "1011 rsp 8 c-8 c-16\n"
		  "1020 end - - -\n");
	CHECK_INT(st.rows, ==, 8);
	CHECK_INT(st.fdes, ==, 1);
	/* 1001+1002 and 100f+1010 fold into one stored row each; the page
	 * (0-0xffff) starts with a stored END row at 0 */
	CHECK_INT(st.rows_stored, ==, 7);
	CHECK_STR(lookup_of(&table, 0x1001), "rsp 16 c-8 c-16");
	CHECK_STR(lookup_of(&table, 0x1002), "rsp 24 c-8 c-16");
	CHECK_STR(lookup_of(&table, 0x1005), "rsp 24 c-8 c-16");
	CHECK_STR(lookup_of(&table, 0x100f), "rsp 24 c-8 c-16");
	CHECK_STR(lookup_of(&table, 0x1010), "rsp 16 c-8 c-16");
	CHECK_STR(lookup_of(&table, 0x101f), "rsp 8 c-8 c-16");
	CHECK_STR(lookup_of(&table, 0x1020), "-ENOENT");
	CHECK_STR(lookup_of(&table, 0xfff), "-ENOENT");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__remember_restore_state(void)
{
	static const uint8_t ins[] = {
		ADV(1), DEF_CFA_OFFSET(16), OFFSET(RBP, 2),
		ADV(4), REMEMBER, DEF_CFA_OFFSET(8), 0xc0 | RBP, /* restore rbp */
		ADV(1), RESTORE_STATE,
	};
	struct ember_buf table;

	CHECK_STR(rows_of_program(ins, sizeof(ins), 0x10, &table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 c-16\n"
		  "1005 rsp 8 c-8 same\n"
		  "1006 rsp 16 c-8 c-16\n"
		  "1010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__cfa_offset_beyond_s16_kept(void)
{
	/* sub $0x2c440,%rsp: def_cfa_offset 181320 (uleb c8 88 0b) */
	static const uint8_t ins[] = { ADV(7), 0x0e, 0xc8, 0x88, 0x0b };
	struct ember_buf table;

	CHECK_STR(rows_of_program(ins, sizeof(ins), 0x10, &table),
		  "1000 rsp 8 c-8 same\n"
		  "1007 rsp 181320 c-8 same\n"
		  "1010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__reg_offset_beyond_s16_invalid(void)
{
	/* rbp at CFA - 8 * 5000 = -40000: only that column is invalid */
	static const uint8_t ins[] = { ADV(1), 0x80 | RBP, 0x88, 0x27, ADV(1),
				       0x80 | RBP, 2 };
	struct ember_buf table;

	CHECK_STR(rows_of_program(ins, sizeof(ins), 0x10, &table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 8 c-8 invalid\n"
		  "1002 rsp 8 c-8 c-16\n"
		  "1010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__expressions_classified(void)
{
	static const uint8_t ins[] = {
		/* PLT, threshold 10 */
		0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3a, 0x2a, 0x33, 0x24, 0x22,
		/* breg6 -8; deref; plus_uconst 16 */
		ADV(2), 0x0f, 5, 0x76, 0x78, 0x06, 0x23, 0x10,
	};
	static const uint8_t tail[] = {
		ADV(2), 0x0f, 3, 0x77, 0x10, 0x9f,	/* breg7 16; stack_value */
		ADV(2), DEF_CFA(RSP, 8), 0x10, RBP, 2, 0x76, 0x00, /* rbp at(rbp+0) */
		ADV(2), 0x16, RBP, 2, 0x77, 0x08,	/* rbp vat(rsp+8) */
		ADV(2), 0x10, RBP, 3, 0x77, 0x08, 0x06,	/* rbp: breg7 8; deref */
	};
	uint8_t prog[sizeof(ins) + sizeof(tail)];
	struct ember_buf table;

	memcpy(prog, ins, sizeof(ins));
	memcpy(prog + sizeof(ins), tail, sizeof(tail));
	CHECK_STR(rows_of_program(prog, sizeof(prog), 0x10, &table),
		  "1000 plt 10 c-8 same\n"
		  "1002 deref(rbp-8) 16 c-8 same\n"
		  "1004 invalid - - -\n"
		  "1006 rsp 8 c-8 at(rbp+0)\n"
		  "1008 rsp 8 c-8 vat(rsp+8)\n"
		  "100a rsp 8 c-8 invalid\n"
		  "1010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__ra_undefined_and_in_register(void)
{
	static const uint8_t ins[] = { UNDEFINED(RIP), ADV(3), 0x09, RIP, 5,
				       ADV(1), 0x14, RBP, 2 /* val_offset */ };
	struct ember_buf table;

	CHECK_STR(rows_of_program(ins, sizeof(ins), 0x8, &table),
		  "1000 rsp 8 undefined same\n"
		  "1003 rsp 8 reg:rdi same\n"
		  "1004 rsp 8 reg:rdi v-16\n"
		  "1008 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__unknown_opcode_rest_invalid(void)
{
	static const uint8_t ins[] = { ADV(1), DEF_CFA_OFFSET(16), ADV(1), 0x3f,
				       ADV(1), DEF_CFA_OFFSET(24) };
	struct ember_buf table;
	struct unwind_compile_stats st;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x1000, 0x10, ins, sizeof(ins));
	cfi_fde(&c, cie, 0x1010, 0x10, ins, 0);
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, &st), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 same\n"
		  "1002 invalid - - -\n"
		  "1010 rsp 8 c-8 same\n"
		  "1020 end - - -\n");
	CHECK_INT(st.fdes_unsupported, ==, 1);
	CHECK_INT(st.rows_invalid, ==, 1);
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__restore_state_underflow_invalid(void)
{
	static const uint8_t ins[] = { ADV(1), DEF_CFA_OFFSET(16), ADV(1), RESTORE_STATE };
	struct ember_buf table;

	CHECK_STR(rows_of_program(ins, sizeof(ins), 0x10, &table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 same\n"
		  "1002 invalid - - -\n"
		  "1010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__signal_frame_cie(void)
{
	static const uint8_t ins[] = { 0x0f, 3, 0x77, 0xa0, 0x01, 0x06 };
	struct ember_buf table;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zRS");

	cfi_fde(&c, cie, 0x2000, 0x9, ins, sizeof(ins));
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, NULL), ==, 0);
	CHECK_STR(rows_of(&table), "2000 signal - - -\n2009 end - - -\n");
	CHECK_STR(lookup_of(&table, 0x2004), "signal - - -");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__arm64_negate_ra_state(void)
{
	/* CIE: CFA = sp + 0, RA = x30 same; FDE: paciasp, stp x29, x30 */
	static const uint8_t ins[] = { ADV(1), 0x2d, ADV(1), DEF_CFA_OFFSET(16),
				       0x80 | 29, 2, 0x80 | 30, 1, ADV(1), 0x2d };
	struct ember_buf table;
	struct cfi c = { .eh = true };
	size_t at = c.n;

	/* an arm64 CIE: code alignment 4, data alignment -8, RA column 30 */
	put_u32(&c, 0);
	put_u32(&c, 0);
	put_u8(&c, 1);
	put(&c, "zR", 3);
	put_u8(&c, 4);
	put_u8(&c, 0x78);
	put_u8(&c, 30);
	put_u8(&c, 1);
	put_u8(&c, 0x1b);
	put_u8(&c, 0x0c);
	put_u8(&c, 31);
	put_u8(&c, 0);
	entry_end(&c, at);
	cfi_fde(&c, at, 0x1000, 0x20, ins, sizeof(ins));
	CHECK_INT(compile_cfi(&c, UNWIND_EM_AARCH64, &table, NULL), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 sp 0 same same\n"
		  "1004 sp 0 same(signed) same\n"
		  "1008 sp 16 c-8(signed) c-16\n"
		  "100c sp 16 c-8 c-16\n"
		  "1020 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

/* ---- several FDEs: order, gaps, sections ----------------------------------------- */

static int test_unwind__gap_bridging(void)
{
	static const uint8_t push[] = { ADV(1), DEF_CFA_OFFSET(16) };
	struct ember_buf table;
	struct unwind_compile_stats st;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x1000, 0x11, push, sizeof(push));	/* gap 15 */
	cfi_fde(&c, cie, 0x1020, 0x10, push, sizeof(push));	/* gap 16 */
	cfi_fde(&c, cie, 0x1040, 0x10, push, 0);
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, &st), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 same\n"
		  "1020 rsp 8 c-8 same\n"
		  "1021 rsp 16 c-8 same\n"
		  "1030 end - - -\n"
		  "1040 rsp 8 c-8 same\n"
		  "1050 end - - -\n");
	CHECK_INT(st.gaps_bridged, ==, 1);
	CHECK_INT(st.rows_end, ==, 2);
	CHECK_STR(lookup_of(&table, 0x101f), "rsp 16 c-8 same");
	CHECK_STR(lookup_of(&table, 0x1035), "-ENOENT");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__eh_frame_wins_over_debug_frame(void)
{
	static const uint8_t eh_ins[] = { ADV(1), DEF_CFA_OFFSET(16) };
	static const uint8_t dbg_ins[] = { ADV(2), DEF_CFA_OFFSET(32) };
	struct ember_buf table;
	struct unwind_compile_stats st;
	struct unwind_input in;
	struct cfi eh = { .eh = true }, dbg = { .eh = false };
	size_t ecie = cfi_cie(&eh, "zR"), dcie = cfi_cie(&dbg, "");

	cfi_fde(&eh, ecie, 0x1000, 0x20, eh_ins, sizeof(eh_ins));
	cfi_fde(&dbg, dcie, 0x1000, 0x20, dbg_ins, sizeof(dbg_ins)); /* same */
	cfi_fde(&dbg, dcie, 0x1018, 0x20, dbg_ins, sizeof(dbg_ins)); /* overlaps */
	cfi_fde(&dbg, dcie, 0x1040, 0x10, dbg_ins, sizeof(dbg_ins)); /* alone */
	input_init(&in, UNWIND_EM_X86_64);
	input_set(&in, &eh);
	input_set(&in, &dbg);
	CHECK_INT(compile(&in, &table, &st), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 same\n"
		  "1020 end - - -\n"
		  "1040 rsp 8 c-8 same\n"
		  "1042 rsp 32 c-8 same\n"
		  "1050 end - - -\n");
	CHECK_INT(st.fdes, ==, 2);
	CHECK_INT(st.fdes_debug_frame, ==, 1);
	CHECK_INT(st.fdes_dropped, ==, 2);
	in.flags = UNWIND_COMPILE_DEBUG_FRAME_ONLY;
	in.sec[UNWIND_SEC_EH].data = NULL;
	ember_buf_release(&table);
	CHECK_INT(compile(&in, &table, &st), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 rsp 8 c-8 same\n"
		  "1002 rsp 32 c-8 same\n"
		  "1018 rsp 8 c-8 same\n"
		  "101a rsp 32 c-8 same\n"
		  "1040 rsp 8 c-8 same\n"
		  "1042 rsp 32 c-8 same\n"
		  "1050 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__overlapping_and_duplicate_fdes(void)
{
	static const uint8_t a[] = { ADV(1), DEF_CFA_OFFSET(16) };
	static const uint8_t b[] = { ADV(1), DEF_CFA_OFFSET(48) };
	struct ember_buf table;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x1080, 0x10, b, sizeof(b));	/* inside the next one */
	cfi_fde(&c, cie, 0x1000, 0x100, a, sizeof(a));
	cfi_fde(&c, cie, 0x1000, 0x10, b, sizeof(b));	/* same start: dropped */
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, NULL), ==, 0);
	CHECK_STR(rows_of(&table),
		  "1000 rsp 8 c-8 same\n"
		  "1001 rsp 16 c-8 same\n"
		  "1080 rsp 8 c-8 same\n"
		  "1081 rsp 48 c-8 same\n"
		  "1090 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__debug_frame_64bit_cie_v4(void)
{
	static const uint8_t ins[] = { ADV(4), DEF_CFA_OFFSET(16) };
	struct cfi c = { .eh = false };
	struct ember_buf table;
	size_t cie = c.n;

	/* 64-bit DWARF CIE, version 4 (address size 8, segment size 0) */
	put_u32(&c, 0xffffffffu);
	put_u64(&c, 0);
	put_u64(&c, UINT64_MAX);
	put_u8(&c, 4);
	put(&c, "", 1);
	put_u8(&c, 8);
	put_u8(&c, 0);
	put_u8(&c, 1);
	put_u8(&c, 0x78);
	put_u8(&c, RIP);
	put_u8(&c, 0x0c), put_u8(&c, RSP), put_u8(&c, 8), put_u8(&c, 0x80 | RIP), put_u8(&c, 1);
	{
		uint64_t len = c.n - cie - 12;

		memcpy(c.b + cie + 4, &len, 8);
	}
	size_t fde = c.n;

	put_u32(&c, 0xffffffffu);
	put_u64(&c, 0);
	put_u64(&c, cie);
	put_u64(&c, 0x3000);
	put_u64(&c, 0x10);
	put(&c, ins, sizeof(ins));
	{
		uint64_t len = c.n - fde - 12;

		memcpy(c.b + fde + 4, &len, 8);
	}
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, NULL), ==, 0);
	CHECK_STR(rows_of(&table),
		  "3000 rsp 8 c-8 same\n"
		  "3004 rsp 16 c-8 same\n"
		  "3010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

/* More CIEs than the CIE array first holds, each followed by its FDE:
 * the array moves while .eh_frame is read in one pass (libcublasLt has
 * 42 CIEs; FDEs once kept pointers into the array). */
static int test_unwind__many_cies_in_one_pass(void)
{
	struct ember_buf table;
	struct unwind_compile_stats st;
	struct cfi c = { .eh = true };
	char want[4096];
	size_t n = 0;

	for (unsigned i = 0; i < 40; i++) {
		const uint8_t ins[] = { ADV(1), DEF_CFA_OFFSET((uint8_t)(16 + 8 * (i % 4))) };
		size_t cie = cfi_cie(&c, i % 2 ? "zRS" : "zR");

		cfi_fde(&c, cie, 0x1000 + 0x40 * i, 0x20, ins, sizeof(ins));
		if (i % 2)
			n += (size_t)snprintf(want + n, sizeof(want) - n,
					      "%x signal - - -\n%x end - - -\n",
					      0x1000 + 0x40 * i, 0x1020 + 0x40 * i);
		else
			n += (size_t)snprintf(want + n, sizeof(want) - n,
					      "%x rsp 8 c-8 same\n%x rsp %u c-8 same\n%x end - - -\n",
					      0x1000 + 0x40 * i, 0x1001 + 0x40 * i,
					      16 + 8 * (i % 4), 0x1020 + 0x40 * i);
	}
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, &st), ==, 0);
	CHECK_INT(st.fdes, ==, 40);
	CHECK_STR(rows_of(&table), want);
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__zero_length_entries_skipped(void)
{
	static const uint8_t ins[] = { ADV(1), DEF_CFA_OFFSET(16) };
	struct ember_buf table;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	put_u32(&c, 0);		/* a zero terminator in the middle */
	cfi_fde(&c, cie, 0x1000, 0x10, ins, sizeof(ins));
	put_u32(&c, 0);
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, NULL), ==, 0);
	CHECK_STR(rows_of(&table), "1000 rsp 8 c-8 same\n1001 rsp 16 c-8 same\n1010 end - - -\n");
	ember_buf_release(&table);
	return 0;
}

/* A function across four 64 KiB pages; its end falls on a page boundary. */
static int test_unwind__rows_across_pages(void)
{
	static const uint8_t ins[] = {
		ADV(1), DEF_CFA_OFFSET(16),
		0x03, 0xff, 0xff, DEF_CFA_OFFSET(24),	/* advance_loc2 65535 -> 0x20000 */
		0x03, 0x00, 0x80, DEF_CFA_OFFSET(32),	/* +32768 -> 0x28000 */
	};
	struct ember_buf table;
	struct unwind_compile_stats st;
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x10000, 0x30000, ins, sizeof(ins));
	CHECK_INT(compile_cfi(&c, UNWIND_EM_X86_64, &table, &st), ==, 0);
	CHECK_STR(rows_of(&table),
		  "10000 rsp 8 c-8 same\n"
		  "10001 rsp 16 c-8 same\n"
		  "20000 rsp 24 c-8 same\n"
		  "28000 rsp 32 c-8 same\n"
		  "40000 end - - -\n");
	CHECK_INT(st.pages, ==, 3); /* the page at 0x40000 holds only END */
	CHECK_STR(lookup_of(&table, 0x1ffff), "rsp 16 c-8 same");
	CHECK_STR(lookup_of(&table, 0x20000), "rsp 24 c-8 same");
	CHECK_STR(lookup_of(&table, 0x3ffff), "rsp 32 c-8 same");
	CHECK_STR(lookup_of(&table, 0x40000), "-ENOENT");
	ember_buf_release(&table);
	return 0;
}

/* ---- corrupt CFI: a clear error and no table ---------------------------------------- */

static int compile_expect_error(struct cfi *c, const char *what)
{
	struct ember_buf table;
	int err;

	err = compile_cfi(c, UNWIND_EM_X86_64, &table, NULL);
	CHECK_INT(err, ==, -UNWIND_ERR_BAD_CFI);
	CHECK_INT(table.len, ==, 0);
	if (!strstr(err_msg, what)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", err_msg, what);
		return 1;
	}
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__truncated_eh_frame_rejected(void)
{
	static const uint8_t ins[] = { ADV(1), DEF_CFA_OFFSET(16) };
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR"), full;

	cfi_fde(&c, cie, 0x1000, 0x10, ins, sizeof(ins));
	full = c.n;
	for (c.n = full - 1; c.n > cie; c.n--)
		if (c.n != 24 && compile_expect_error(&c, "'.eh_frame' +0x"))
			return 1; /* (24: the CIE alone, a valid section) */
	c.n = full;
	memcpy(c.b + 24, "\xff\xff\x00\x00", 4);	/* FDE length past the end */
	return compile_expect_error(&c, "'.eh_frame' +0x18: entry length 0xffff runs past the section end");
}

static int test_unwind__bad_cie_pointer_rejected(void)
{
	static const uint8_t ins[] = { ADV(1) };
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x1000, 0x10, ins, sizeof(ins));
	c.b[cie + 24 + 4] -= 4; /* the FDE's CIE pointer now names offset 4 */
	return compile_expect_error(&c, "FDE names no CIE");
}

static int test_unwind__truncated_operand_rejected(void)
{
	/* def_cfa_offset with a LEB128 operand that never ends */
	static const uint8_t ins[] = { ADV(1), 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80 };
	struct cfi c = { .eh = true };
	size_t cie = cfi_cie(&c, "zR");

	cfi_fde(&c, cie, 0x1000, 0x10, ins, sizeof(ins));
	c.n -= 0; /* entry_end padded with nops: make the pad part of the LEB */
	for (size_t i = c.n - 8; i < c.n; i++)
		if (c.b[i] == 0)
			c.b[i] = 0x80;
	return compile_expect_error(&c, "operand of DW_CFA 0x0e runs past the entry");
}

/* ---- the table ----------------------------------------------------------------------- */

static int small_table(struct ember_buf *table)
{
	static const uint8_t ins[] = { ADV(1), DEF_CFA_OFFSET(16), ADV(3), DEF_CFA_OFFSET(24),
				       ADV(5), DEF_CFA_REGISTER(RBP), OFFSET(RBP, 2) };
	struct unwind_input in;
	static struct cfi c;
	size_t cie;

	c.n = 0;
	c.eh = true;
	cie = cfi_cie(&c, "zR");
	cfi_fde(&c, cie, 0x1000, 0x20, ins, sizeof(ins));
	cfi_fde(&c, cie, 0x12340, 0x20, ins, sizeof(ins));
	input_init(&in, UNWIND_EM_X86_64);
	input_set(&in, &c);
	memcpy(in.build_id, "\x01\x02\x03\x04", 4);
	in.build_id_len = 4;
	return compile(&in, table, NULL);
}

static int test_unwind__table_deterministic(void)
{
	struct ember_buf a, b;
	const struct unwind_table_header *h;
	struct unwind_table *ub;
	int err;

	CHECK_INT(small_table(&a), ==, 0);
	CHECK_INT(small_table(&b), ==, 0);
	CHECK_INT(a.len, ==, b.len);
	CHECK(memcmp(a.data, b.data, a.len) == 0);
	ub = unwind_table_new(a.data, a.len, &err);
	CHECK(ub);
	h = unwind_table_header(ub);
	CHECK_INT(h->version, ==, UNWIND_TABLE_VERSION);
	CHECK_INT(h->machine, ==, 62);
	CHECK_INT(h->build_id_len, ==, 4);
	CHECK(memcmp(h->build_id, "\x01\x02\x03\x04", 4) == 0);
	CHECK_INT(h->nrows, ==, 10);
	CHECK_INT(h->npages, ==, 2);
	CHECK_INT(h->nfdes, ==, 2);
	CHECK_INT(h->size, ==, a.len);
	unwind_table_free(ub);
	ember_buf_release(&a);
	ember_buf_release(&b);
	return 0;
}

static int test_unwind__table_corruption_detected(void)
{
	struct ember_buf table;
	struct unwind_table *b;
	int err;

	CHECK_INT(small_table(&table), ==, 0);
	for (size_t i = 0; i < table.len; i++) {
		table.data[i] ^= 0x10;
		b = unwind_table_new(table.data, table.len, &err);
		CHECK(b == NULL);
		CHECK(err == -UNWIND_ERR_CHECKSUM || err == -UNWIND_ERR_BAD_TABLE ||
		      err == -UNWIND_ERR_VERSION || err == -UNWIND_ERR_ARCH);
		table.data[i] ^= 0x10;
	}
	for (size_t n = 0; n < table.len; n += 7) {
		b = unwind_table_new(table.data, n, &err);
		CHECK(b == NULL);
	}
	b = unwind_table_new(table.data, table.len, &err);
	CHECK(b != NULL);
	unwind_table_free(b);
	ember_buf_release(&table);
	return 0;
}

/* Change a field and fix the checksum: the layout checks must catch it. */
static int reseal(struct ember_buf *table)
{
	struct unwind_table_header h;
	uint32_t crc;

	memcpy(&h, table->data, sizeof(h));
	h.crc32 = 0;
	memcpy(table->data, &h, sizeof(h));
	crc = (uint32_t)crc32_z(0, (const Bytef *)table->data, table->len);
	memcpy(table->data + offsetof(struct unwind_table_header, crc32), &crc, 4);
	return 0;
}

static int test_unwind__table_layout_checked(void)
{
	struct ember_buf table;
	struct unwind_table_header h;
	struct unwind_table *b;
	struct unwind_page p;
	size_t pages;
	int err;

	CHECK_INT(small_table(&table), ==, 0);
	memcpy(&h, table.data, sizeof(h));
	pages = sizeof(h) + h.data_size + h.nrules * sizeof(struct unwind_rule);
	h.version = 2;
	memcpy(table.data, &h, sizeof(h));
	reseal(&table);
	CHECK(!unwind_table_new(table.data, table.len, &err));
	CHECK_INT(err, ==, -UNWIND_ERR_VERSION);
	h.version = UNWIND_TABLE_VERSION;
	memcpy(table.data, &h, sizeof(h));
	memcpy(&p, table.data + pages, sizeof(p));
	p.data_off = h.data_size;		/* page data out of bounds */
	memcpy(table.data + pages, &p, sizeof(p));
	reseal(&table);
	CHECK(!unwind_table_new(table.data, table.len, &err));
	CHECK_INT(err, ==, -UNWIND_ERR_BAD_TABLE);
	p.data_off = 0;
	memcpy(table.data + pages, &p, sizeof(p));
	reseal(&table);
	b = unwind_table_new(table.data, table.len, &err);
	CHECK(b); /* restored */
	unwind_table_free(b);
	memcpy(table.data + sizeof(h), "\xff\xff", 2); /* page 0's palette[0] */
	reseal(&table);
	CHECK(!unwind_table_new(table.data, table.len, &err));
	CHECK_INT(err, ==, -UNWIND_ERR_BAD_TABLE);
	ember_buf_release(&table);
	return 0;
}

/* ---- ELF files ---------------------------------------------------------------------- */

/* tests/unwind's own fixtures are built next to this binary. */
static const char *own_fixture(const char *name)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	path[n > 0 ? n : 0] = '\0';
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, sizeof(path) - (size_t)(slash ? slash + 1 - path : 0),
		 "%s", name);
	return path;
}

/* The whole file, read-only (munmap with size). */
static void *map_ro(const char *path, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	void *p;

	if (fd < 0)
		return NULL;
	fstat(fd, &st);
	*size = (size_t)st.st_size;
	p = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* GNU build ID with libelf, independently of the code under test. */
static size_t elf_build_id(const char *path, uint8_t *out)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t n = 0;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !n && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t no, doff;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && gelf_getnote(d, 0, &nh, &no, &doff) && nh.n_type == NT_GNU_BUILD_ID) {
			memcpy(out, (char *)d->d_buf + doff, nh.n_descsz);
			n = nh.n_descsz;
		}
	}
	elf_end(elf);
	close(fd);
	return n;
}

static int test_unwind__elf_fixture_compiles(void)
{
	const char *path = unit_fixture("c_O2_pie");
	struct unwind_compile_stats st;
	struct unwind_compile_opts o = { .sz = sizeof(o), .stats = &st };
	uint8_t id[64];
	size_t n = elf_build_id(path, id);
	struct ember_buf table;
	struct unwind_table *b;
	int err;

	if (n == 0)
		return UNIT_SKIP;
	ember_buf_init(&table, 1 << 24);
	CHECK_INT(unwind_table_compile(path, NULL, &o, &table), ==, 0);
	b = unwind_table_new(table.data, table.len, &err);
	CHECK(b);
	CHECK_INT(unwind_table_header(b)->build_id_len, ==, n);
	CHECK(memcmp(unwind_table_header(b)->build_id, id, n) == 0);
	CHECK_INT(unwind_table_header(b)->flags, ==, UNWIND_TABLE_EH_FRAME);
	CHECK_INT(st.table_size, ==, table.len);
	CHECK(st.fdes > 5);
	unwind_table_free(b);
	ember_buf_release(&table);
	return 0;
}

static int test_unwind__elf_errors(void)
{
	char msg[256];
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = sizeof(msg) };
	struct ember_buf table;
	char bin[4096], other[4096];

	snprintf(bin, sizeof(bin), "%s", unit_fixture("c_stripped"));
	snprintf(other, sizeof(other), "%s", unit_fixture("cxx_O2"));
	if (access(bin, R_OK))
		return UNIT_SKIP;
	ember_buf_init(&table, 1 << 24);
	CHECK_INT(unwind_table_compile("/nonexistent/x", NULL, &o, &table), ==, -ENOENT);
	CHECK(strstr(msg, "cannot open '/nonexistent/x'"));
	CHECK_INT(unwind_table_compile(unit_fixture("MANIFEST"), NULL, &o, &table),
		  ==, -UNWIND_ERR_NOT_ELF);
	CHECK_INT(unwind_table_compile(unit_fixture("c_stripped.debug"), NULL,
				       &o, &table), ==, -UNWIND_ERR_NO_CFI);
	CHECK_INT(unwind_table_compile(bin, other, &o, &table), ==, -UNWIND_ERR_DEBUG_MISMATCH);
	CHECK_INT(table.len, ==, 0);
	CHECK_INT(unwind_table_compile(bin, unit_fixture("c_stripped.debug"),
				       &o, &table), ==, 0);
	ember_buf_release(&table);
	return 0;
}

/* A build-ID note longer than a table's header holds (68 bytes) is an
 * error saying so, not a table without a build ID. */
static int test_unwind__long_build_id_rejected(void)
{
	char msg[256], path[4096];
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = sizeof(msg) };
	struct ember_buf table;
	int err, rc = unit_long_build_id_elf(path, sizeof(path));

	if (rc)
		return rc;
	ember_buf_init(&table, 1 << 24);
	err = unwind_table_compile(path, NULL, &o, &table);
	unlink(path);
	ember_buf_release(&table);
	CHECK_INT(err, ==, -UNWIND_ERR_BAD_ELF);
	CHECK(strstr(msg, "build-ID note longer than 64 bytes"));
	return 0;
}

/* The .eh_frame section of an image: offset and size, via libelf. */
static int elf_section(const void *image, size_t size, const char *name,
		       size_t *off, size_t *len)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int found = -1;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name) == 0) {
			*off = sh.sh_offset;
			*len = sh.sh_size;
			found = 0;
		}
	}
	elf_end(elf);
	return found;
}

static int test_unwind__corrupt_eh_frame_in_elf(void)
{
	size_t size, off, len;
	const char *path = unit_fixture("c_O2_pie");
	uint8_t *ro = map_ro(path, &size), *copy;
	char msg[256];
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = sizeof(msg) };
	struct ember_buf table;

	if (!ro)
		return UNIT_SKIP;
	copy = malloc(size);
	memcpy(copy, ro, size);
	munmap(ro, size);
	CHECK_INT(elf_section(copy, size, ".eh_frame", &off, &len), ==, 0);
	memcpy(copy + off + 0x18, "\x00\x00\x00\x7f", 4); /* second entry's length */
	ember_buf_init(&table, 1 << 24);
	CHECK_INT(unwind_table_compile_mem(copy, size, NULL, 0, &o, &table), ==,
		  -UNWIND_ERR_BAD_CFI);
	CHECK_INT(table.len, ==, 0);
	CHECK(strstr(msg, "'.eh_frame' +0x18: entry length 0x7f000000 runs past the "
			  "section end (0x26c)") == msg);
	ember_buf_release(&table);
	free(copy);
	return 0;
}

/* Go's compressed .debug_frame from a read-only mapping: libelf must
 * decompress into the private copy, not into the caller's memory. */
static int test_unwind__compressed_debug_frame_readonly(void)
{
	size_t size;
	void *ro = map_ro(unit_fixture("go_prog"), &size);
	struct unwind_compile_stats st;
	struct unwind_compile_opts o = { .sz = sizeof(o), .stats = &st };
	struct ember_buf table;

	if (!ro)
		return UNIT_SKIP;
	ember_buf_init(&table, 1 << 24);
	CHECK_INT(unwind_table_compile_mem(ro, size, NULL, 0, &o, &table), ==, 0);
	CHECK(st.fdes_debug_frame > 100);
	CHECK_INT(st.fdes_debug_frame, ==, st.fdes);
	munmap(ro, size);
	ember_buf_release(&table);
	return 0;
}

/*
 * A compressed .debug_frame is checked against the limit before it is
 * inflated (the unwind route took 3.2 GB for one that inflated to
 * 2 GiB): a few bytes whose header claims 2 GiB are refused at the
 * default limit of 1 GiB, and Go's real one (22 KiB inflated) below its
 * size, each naming the section and the sizes; at its size it compiles.
 */
static int test_unwind__compressed_section_limit(void)
{
	static const uint8_t zeros[64];
	const struct craft_sect sects[] = {
		{ .name = ".text", .flags = SHF_ALLOC | SHF_EXECINSTR, .addr = 0x1000,
		  .data = zeros, .size = 16 },
		{ .name = ".debug_frame", .flags = SHF_COMPRESSED, .data = zeros,
		  .size = sizeof(zeros), .claim = (uint64_t)2 << 30 },
	};
	struct craft_elf e = { sects, 2, NULL, 0 };
	char msg[256];
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = sizeof(msg) };
	struct ember_buf table;
	uint8_t *img;
	size_t len, size;
	void *ro;

	CHECK_INT(craft_elf_image(&e, &img, &len), ==, 0);
	ember_buf_init(&table, 1 << 24);
	CHECK_INT(unwind_table_compile_mem(img, len, NULL, 0, &o, &table), ==, -E2BIG);
	CHECK(strstr(msg, "section '.debug_frame' inflates to 2147483648 bytes, "
		      "more than the limit of 1073741824"));
	free(img);
	ro = map_ro(unit_fixture("go_prog"), &size);
	if (!ro)
		return UNIT_SKIP;
	o.max_section_bytes = 0x5000;
	CHECK_INT(unwind_table_compile_mem(ro, size, NULL, 0, &o, &table), ==, -E2BIG);
	CHECK(strstr(msg, "section '.debug_frame' inflates to ") &&
	      strstr(msg, "more than the limit of 20480"));
	o.max_section_bytes = 1u << 20;
	CHECK_INT(unwind_table_compile_mem(ro, size, NULL, 0, &o, &table), ==, 0);
	munmap(ro, size);
	ember_buf_release(&table);
	return 0;
}

/*
 * The rule set's hash is keyed: 20,000 rules that all had one hash under
 * the fixed one it had ((a ^ b * 0x9e3779b97f4a7c15) * 0xbf58476d1ce4e5b9,
 * a and b the rule's two words: pick b, then a = x ^ b * 0x9e37...) and
 * took 200 million probes take about one each, and intern as themselves.
 */
static int test_unwind__rule_set_keyed(void)
{
	const uint64_t x = 0x0123456789abcdefull, c1 = 0x9e3779b97f4a7c15ull;
	struct unwind_rule_set set;
	size_t n = 20000;

	unwind_rules_init(&set);
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < n; j++) {
			uint64_t w[2] = { x ^ (j * c1), j };
			struct unwind_rule r;

			memcpy(&r, w, sizeof(r));
			CHECK_INT(unwind_rules_intern(&set, &r), ==, j);
		}
	CHECK_INT(set.n, ==, n);
	CHECK_INT(set.probes, <, 8 * n);
	unwind_rules_release(&set);
	return 0;
}

/* Without section headers .eh_frame is found through PT_GNU_EH_FRAME:
 * the same rows. */
static int test_unwind__no_section_headers(void)
{
	size_t size;
	const char *path = unit_fixture("c_O2_pie");
	uint8_t *ro = map_ro(path, &size), *copy;
	struct ember_buf a, b;
	Elf64_Ehdr eh;
	char *rows;

	if (!ro)
		return UNIT_SKIP;
	copy = malloc(size);
	memcpy(copy, ro, size);
	munmap(ro, size);
	memcpy(&eh, copy, sizeof(eh));
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	memcpy(copy, &eh, sizeof(eh));
	ember_buf_init(&a, 1 << 24);
	ember_buf_init(&b, 1 << 24);
	CHECK_INT(unwind_table_compile(path, NULL, NULL, &a), ==, 0);
	CHECK_INT(unwind_table_compile_mem(copy, size, NULL, 0, NULL, &b), ==, 0);
	rows = strdup(rows_of(&a));
	CHECK(strlen(rows) > 500);
	CHECK_STR(rows_of(&b), rows);
	free(rows);
	free(copy);
	ember_buf_release(&a);
	ember_buf_release(&b);
	return 0;
}

/* libcfi_cases.so (tests/unwind/cfi_cases.S): the exact rows of
 * cfi_push_pop and cfi_drap, from the assembler source. */
static int test_unwind__assembled_cfi_cases(void)
{
	const char *path = own_fixture("libcfi_cases.so");
	struct ember_buf table;
	struct unwind_compile_opts o = { .sz = sizeof(o),
					 .flags = UNWIND_COMPILE_EH_FRAME_ONLY };
	const char *rows;

	if (access(path, R_OK))
		return UNIT_SKIP;
	ember_buf_init(&table, 1 << 24);
	CHECK_INT(unwind_table_compile(path, NULL, &o, &table), ==, 0);
	rows = rows_of(&table);
	CHECK(strstr(rows,
		     "1000 rsp 8 c-8 same\n"
		     "1001 rsp 16 c-8 c-16\n"
		     "1002 rsp 24 c-8 c-16\n"
		     "1009 rsp 131104 c-8 c-16\n"
		     "1010 rsp 24 c-8 c-16\n"
		     "1011 rsp 16 c-8 c-16\n"
		     "1012 rsp 8 c-8 c-16\n"
		     "1013 rsp 24 c-8 c-16\n"));
	CHECK(strstr(rows,
		     "1035 r10 0 c-8 same\n"
		     "1041 r10 0 c-8 at(rbp+0)\n"
		     "1043 deref(rbp-8) 0 c-8 at(rbp+0)\n"
		     "1046 r10 0 c-8 at(rbp+0)\n"
		     "104b rsp 8 c-8 at(rbp+0)\n"));
	CHECK(strstr(rows, "1076 end - - -\n10b1 signal - - -\n"));
	ember_buf_release(&table);
	return 0;
}

/* Each code's kind: no CFI "not found" (no table to give), every other
 * rejection and a section past the inflate limit unusable input; an
 * errno (ours) never either. */
static int test_unwind__error_kind(void)
{
	for (int e = UNWIND_ERR_NOT_ELF; e <= UNWIND_ERR_VERSION; e++)
		CHECK_INT(unwind_error_kind(-e), ==,
			  e == UNWIND_ERR_NO_CFI ? EMBER_ERRK_NOT_FOUND : EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(unwind_error_kind(-E2BIG), ==, EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(unwind_error_kind(-EIO), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(unwind_error_kind(-ENOENT), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(unwind_error_kind(-EAGAIN), ==, EMBER_ERRK_BUSY);
	CHECK_INT(unwind_error_kind(-ENOSPC), ==, EMBER_ERRK_NO_SPACE);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_unwind__error_kind),
	UNIT_CASE(test_unwind__cursor_leb128),
	UNIT_CASE(test_unwind__long_build_id_rejected),
	UNIT_CASE(test_unwind__cursor_encoded_pointers),
	UNIT_CASE(test_unwind__push_pop_rows_merged),
	UNIT_CASE(test_unwind__remember_restore_state),
	UNIT_CASE(test_unwind__cfa_offset_beyond_s16_kept),
	UNIT_CASE(test_unwind__reg_offset_beyond_s16_invalid),
	UNIT_CASE(test_unwind__expressions_classified),
	UNIT_CASE(test_unwind__ra_undefined_and_in_register),
	UNIT_CASE(test_unwind__unknown_opcode_rest_invalid),
	UNIT_CASE(test_unwind__restore_state_underflow_invalid),
	UNIT_CASE(test_unwind__signal_frame_cie),
	UNIT_CASE(test_unwind__arm64_negate_ra_state),
	UNIT_CASE(test_unwind__gap_bridging),
	UNIT_CASE(test_unwind__eh_frame_wins_over_debug_frame),
	UNIT_CASE(test_unwind__overlapping_and_duplicate_fdes),
	UNIT_CASE(test_unwind__debug_frame_64bit_cie_v4),
	UNIT_CASE(test_unwind__many_cies_in_one_pass),
	UNIT_CASE(test_unwind__zero_length_entries_skipped),
	UNIT_CASE(test_unwind__rows_across_pages),
	UNIT_CASE(test_unwind__truncated_eh_frame_rejected),
	UNIT_CASE(test_unwind__bad_cie_pointer_rejected),
	UNIT_CASE(test_unwind__truncated_operand_rejected),
	UNIT_CASE(test_unwind__table_deterministic),
	UNIT_CASE(test_unwind__table_corruption_detected),
	UNIT_CASE(test_unwind__table_layout_checked),
	UNIT_CASE(test_unwind__elf_fixture_compiles),
	UNIT_CASE(test_unwind__elf_errors),
	UNIT_CASE(test_unwind__corrupt_eh_frame_in_elf),
	UNIT_CASE(test_unwind__compressed_debug_frame_readonly),
	UNIT_CASE(test_unwind__compressed_section_limit),
	UNIT_CASE(test_unwind__rule_set_keyed),
	UNIT_CASE(test_unwind__no_section_headers),
	UNIT_CASE(test_unwind__assembled_cfi_cases),
};

UNIT_MAIN_QUIET(cases)
