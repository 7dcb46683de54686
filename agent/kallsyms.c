/*
 * kallsyms.c - kernel frames named in the agent, from /proc/kallsyms:
 * "ADDR TYPE NAME [MODULE]" lines whose addresses are the running
 * kernel's, KASLR offset already applied, which is what bpf_get_stackid
 * records; so a lookup is a binary search with no relocation.  When
 * kptr_restrict hides the addresses (all zero), the agent says so rather
 * than naming every frame wrong.
 */
#include "agent_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t addr;
	uint32_t name;	/* offset into names */
	uint32_t mod;	/* offset into names; 0 is "" */
};

struct agent_kallsyms {
	struct ksym *syms;
	size_t n, alloc;
	struct ember_buf names;
	uint64_t stext, etext;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add_name(struct agent_kallsyms *k, const char *s, uint32_t *off)
{
	size_t at = k->names.len;

	if (at > UINT32_MAX)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&k->names, s, strlen(s) + 1));
	*off = (uint32_t)at;
	return 0;
}

static int add_line(struct agent_kallsyms *k, char *line)
{
	char type, name[512], mod[128] = "";
	uint64_t addr;
	struct ksym s = { 0 };
	int n = sscanf(line, "%" SCNx64 " %c %511s [%127[^]]]", &addr, &type, name, mod);

	if (n < 3)
		return 0;
	if (!strcmp(name, "_stext"))
		k->stext = addr;
	else if (!strcmp(name, "_etext"))
		k->etext = addr;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0; /* only code */
	s.addr = addr;
	EMBER_FORWARD_IF_ERROR(add_name(k, name, &s.name));
	if (mod[0])
		EMBER_FORWARD_IF_ERROR(add_name(k, mod, &s.mod));
	return EMBER_VEC_PUSH(k->syms, k->n, k->alloc, s);
}

struct agent_kallsyms *agent_kallsyms_new(const char *path, int *err)
{
	struct agent_kallsyms *k = calloc(1, sizeof(*k));
	char line[1024];
	bool nonzero = false;
	FILE *f;
	int e = 0;

	if (!k) {
		*err = -ENOMEM;
		return NULL;
	}
	ember_buf_init(&k->names, (size_t)256 << 20);
	e = ember_buf_append(&k->names, "", 1); /* offset 0: "" */
	f = fopen(path ? path : "/proc/kallsyms", "re");
	if (!f)
		e = -errno;
	while (!e && fgets(line, sizeof(line), f)) {
		e = add_line(k, line);
		nonzero |= k->n && k->syms[k->n - 1].addr != 0;
	}
	if (f)
		fclose(f);
	if (!e && !nonzero)
		e = -EPERM; /* kptr_restrict: every address is 0 */
	if (e) {
		agent_kallsyms_free(k);
		*err = e;
		return NULL;
	}
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k;
}

void agent_kallsyms_free(struct agent_kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	ember_buf_release(&k->names);
	free(k);
}

const char *agent_kallsyms_lookup(const struct agent_kallsyms *k, uint64_t addr,
				  const char **mod)
{
	size_t i = agent_last_at_or_below(k->syms, k->n, sizeof(*k->syms), addr);

	if (i == SIZE_MAX)
		return NULL;
	*mod = k->names.data + k->syms[i].mod;
	return k->names.data + k->syms[i].name;
}

void agent_kallsyms_text(const struct agent_kallsyms *k, uint64_t *start, uint64_t *end)
{
	*start = k->stext;
	*end = k->etext;
}
