/*
 * fuzz_unwind.c - libFuzzer target for the unwind compiler's parsers of
 * outside input (CIE/FDE records, LEB128, encoded pointers, CFA programs,
 * DWARF expressions, ELF headers, .eh_frame_hdr) and for the table reader.
 *
 * The input selects what it is:
 *   "\x7fELF..."        an ELF image, compiled with unwind_table_compile_mem;
 *   "EMBUNWND..."       a table, opened, dumped and looked up;
 *   otherwise byte 0    0: .eh_frame, 1: .debug_frame, 2: both (split at
 *                       byte 1 * len / 256), 3: .eh_frame of an arm64
 *                       binary; the rest is the section.
 * Besides not crashing, every table the compiler writes must open, and each
 * of its rows must be what a lookup at that row's pc finds: a violation
 * aborts, so the fuzzer reports it.
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c so CI replays the corpus and mutated inputs.
 */
#include "unwind.h"
#include "unwind_internal.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

struct check {
	const struct unwind_table *b;
	uint16_t machine;
	size_t rows;
};

/* Each row must be found by a lookup at its own pc. */
static int check_row(const struct unwind_row *row, void *ctx)
{
	struct check *c = ctx;
	struct unwind_row found;
	char line[128];
	int err = unwind_table_lookup(c->b, row->pc, &found);

	if (unwind_row_format(row, c->machine, line, sizeof(line)) < 0)
		abort();
	if (row->rule.cfa_kind == UNWIND_CFA_END ? err != -ENOENT
	    : err || found.pc != row->pc || memcmp(&found.rule, &row->rule, sizeof(row->rule)))
		abort();
	c->rows++;
	return 0;
}

/* Open a table and walk it; own = written by the compiler, must be valid. */
static void exercise_table(const void *data, size_t size, bool own)
{
	struct check c = { 0 };
	struct unwind_row row;
	struct unwind_table *b;
	int err;

	b = unwind_table_new(data, size, &err);
	if (!b) {
		if (own)
			abort();
		return;
	}
	c.b = b;
	c.machine = unwind_table_header(b)->machine;
	unwind_table_foreach_row(b, check_row, &c);
	if (own && c.rows != unwind_table_header(b)->nrows)
		abort();
	for (uint64_t pc = 0; pc < 0x40000; pc += 0x3f1)
		unwind_table_lookup(b, pc, &row);
	unwind_table_free(b);
}

static void compile_sections(const uint8_t *data, size_t size)
{
	struct unwind_input in = { .machine = UNWIND_EM_X86_64, .addr_size = 8,
				   .code_hi = UINT64_C(1) << 24 };
	char msg[256] = "";
	struct ember_diag d = { msg, sizeof(msg), false };
	struct unwind_compile_stats st;
	struct ember_buf table;
	size_t split = size > 1 ? (size_t)data[1] * (size - 1) / 256 : 0;
	uint8_t mode = size ? data[0] % 4 : 0;

	if (size < 2)
		return;
	data++, size--;
	if (mode == 3)
		in.machine = UNWIND_EM_AARCH64;
	if (mode == 2) {
		in.sec[UNWIND_SEC_EH] = (struct unwind_section){ data, split, 0x1000, true };
		in.sec[UNWIND_SEC_DEBUG] = (struct unwind_section){ data + split, size - split, 0, true };
	} else {
		in.sec[mode == 1 ? UNWIND_SEC_DEBUG : UNWIND_SEC_EH] =
			(struct unwind_section){ data, size, mode == 1 ? 0 : 0x1000, true };
	}
	ember_buf_init(&table, 1 << 26);
	if (unwind_compile_input(&in, &d, &st, &table) == 0)
		exercise_table(table.data, table.len, true);
	ember_buf_release(&table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ember_buf table;

	ember_log_set_handler(quiet, NULL);
	if (size >= 4 && memcmp(data, "\x7f" "ELF", 4) == 0) {
		ember_buf_init(&table, 1 << 26);
		if (unwind_table_compile_mem(data, size, NULL, 0, NULL, &table) == 0)
			exercise_table(table.data, table.len, true);
		ember_buf_release(&table);
	} else if (size >= 8 && memcmp(data, UNWIND_TABLE_MAGIC, 8) == 0) {
		exercise_table(data, size, false);
	} else {
		compile_sections(data, size);
	}
	return 0;
}
