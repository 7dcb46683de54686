/*
 * rule.c - from the interpreter's state to the table's 16-byte rule, and
 * the set that interns rules (a binary has a few hundred distinct ones
 * against up to millions of rows).
 *
 * Field widths (docs/unwind-format.md): the CFA offset is s32, the RA
 * and FP offsets and the CFA's second operand s16, registers u8.  A
 * value that does not fit makes its column INVALID (the whole rule when
 * it is the CFA's): offsets are never truncated.
 */
#include "unwind_internal.h"

#include <stdlib.h>

static bool fits16(int64_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* One register column; returns its kind (INVALID when it does not fit). */
static uint8_t col_to_rule(const struct unwind_col *c, uint8_t *reg,
			   int16_t *off)
{
	*reg = 0;
	*off = 0;
	switch (c->kind) {
	case UNWIND_REG_SAME:
	case UNWIND_REG_UNDEFINED:
		return c->kind;
	case UNWIND_REG_AT_CFA:
	case UNWIND_REG_VAL_CFA:
		if (!fits16(c->off))
			return UNWIND_REG_INVALID;
		*off = (int16_t)c->off;
		return c->kind;
	case UNWIND_REG_REGISTER:
	case UNWIND_REG_AT_REG:
	case UNWIND_REG_VAL_REG:
		if (c->reg > UINT8_MAX || !fits16(c->off))
			return UNWIND_REG_INVALID;
		*reg = (uint8_t)c->reg;
		*off = (int16_t)c->off; /* 0 for REGISTER */
		return c->kind;
	default:
		return UNWIND_REG_INVALID;
	}
}

static bool cfa_fits(const struct unwind_state *s)
{
	switch (s->cfa_kind) {
	case UNWIND_CFA_REG:
		return s->cfa_reg <= UINT8_MAX && fits32(s->cfa_off);
	case UNWIND_CFA_PLT:
		return true;
	case UNWIND_CFA_DEREF:
		return s->cfa_reg <= UINT8_MAX && fits32(s->cfa_off) &&
		       fits16(s->cfa_aux);
	default:
		return false;
	}
}

/*
 * The rule is assembled in two 64-bit words and stored whole: the row
 * sink compares it with the previous rule right away, and 8-byte loads
 * of a struct just written field by field stall on store forwarding
 * (half of the sink's time on libLLVM).  The layout is struct
 * unwind_rule's on a little-endian host (unwind.h asserts both).
 */
void unwind_rule_from_state(const struct unwind_state *s, struct unwind_rule *r)
{
	uint8_t ra, fp, ra_reg, fp_reg;
	int16_t ra_off, fp_off;
	uint64_t w[2] = { UNWIND_CFA_INVALID, 0 };

	if (cfa_fits(s)) {
		ra = col_to_rule(&s->ra, &ra_reg, &ra_off);
		fp = col_to_rule(&s->fp, &fp_reg, &fp_off);
		w[0] = (uint64_t)s->cfa_kind | (uint64_t)(ra | fp << 4) << 8 |
		       (uint64_t)(s->ra_signed ? UNWIND_RULE_RA_SIGNED : 0) << 16 |
		       (uint64_t)(uint8_t)s->cfa_reg << 24 | (uint64_t)ra_reg << 32 |
		       (uint64_t)fp_reg << 40 | (uint64_t)(uint16_t)s->cfa_aux << 48;
		w[1] = (uint64_t)(uint32_t)s->cfa_off | (uint64_t)(uint16_t)ra_off << 32 |
		       (uint64_t)(uint16_t)fp_off << 48;
	}
	memcpy(r, w, sizeof(w));
}

/* ---- interning ------------------------------------------------------------ */

/* Keyed (common.h's ember_hash_words, the set's own key): the rules come
 * from the file's CFI, and a fixed hash would let its writer make every
 * rule probe one run of slots, up to 65,535 of them.  One hash a row. */
static size_t rule_hash(const struct unwind_rule_set *s, const struct unwind_rule *r)
{
	uint32_t w[4];

	memcpy(w, r, sizeof(w));
	return ember_hash_words(&s->key, w, 4, s->bits);
}

void unwind_rules_init(struct unwind_rule_set *s)
{
	memset(s, 0, sizeof(*s));
}

void unwind_rules_release(struct unwind_rule_set *s)
{
	if (!s)
		return;
	free(s->rules);
	free(s->slots);
	unwind_rules_init(s);
}

static inline int64_t slot_find(const struct unwind_rule_set *s,
			 const struct unwind_rule *r, size_t *slot)
{
	size_t mask = s->nslots - 1, i = rule_hash(s, r);

	for (;; i = (i + 1) & mask) {
		uint32_t id = s->slots[i];

		if (id == 0 || memcmp(&s->rules[id - 1], r, sizeof(*r)) == 0) {
			*slot = i;
			return (int64_t)id - 1;
		}
		((struct unwind_rule_set *)s)->probes++; /* a counter: for tests */
	}
}

/* Double the slot table (kept at most half full). */
static int slots_grow(struct unwind_rule_set *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 256, slot;
	uint32_t *old = s->slots;
	size_t nold = s->nslots;
	int err;

	if (!nold && (err = ember_words_key_init(&s->key)))
		return err;
	s->slots = calloc(n, sizeof(*s->slots));
	if (!s->slots) {
		s->slots = old;
		return -ENOMEM;
	}
	s->nslots = n;
	s->bits = nold ? s->bits + 1 : 8;
	for (size_t i = 0; i < nold; i++) {
		if (!old[i])
			continue;
		slot_find(s, &s->rules[old[i] - 1], &slot);
		s->slots[slot] = old[i];
	}
	free(old);
	return 0;
}

int64_t unwind_rules_intern(struct unwind_rule_set *s, const struct unwind_rule *r)
{
	size_t slot;
	int64_t id;
	int err;

	if (2 * (s->n + 1) > s->nslots && (err = slots_grow(s)))
		return err;
	id = slot_find(s, r, &slot);
	if (id >= 0)
		return id;
	if (s->n >= UINT32_MAX - 1)
		return -E2BIG;
	if (EMBER_VEC_PUSH(s->rules, s->n, s->alloc, *r))
		return -ENOMEM;
	s->slots[slot] = (uint32_t)s->n;
	return (int64_t)s->n - 1;
}
