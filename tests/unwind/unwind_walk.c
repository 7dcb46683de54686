/*
 * unwind_walk.c - a user-space stack walker that uses nothing but the
 * compiled unwind tables: what an eBPF unwinder does, in C.  Given the
 * registers and the stack of a stopped process (written by
 * test_gdb_unwind.py through gdb), it compiles a table for each mapped
 * ELF file, then walks frame by frame with unwind_table_lookup() and
 * prints each frame's pc.  The test compares them with gdb's frames.
 *
 * Input file, one item a line:
 *   REG rip|rsp|rbp HEX
 *   STACK HEX_ADDR PATH        bytes of the stack from HEX_ADDR
 *   MAP HEX_START HEX_END HEX_OFFSET PATH
 * Output: "0x<pc>" a frame, then "end: outermost frame" or "error: ...".
 */
#include "unwind.h"
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MAPS 512
#define MAX_FRAMES 256

struct map {
	uint64_t start, end, offset;
	char path[512];
	struct module *mod;
};

struct module {
	char path[512];
	struct ember_buf table;
	struct unwind_table *b;
	GElf_Phdr loads[16];
	size_t nloads;
};

struct proc {
	uint64_t rip, rsp, rbp;
	bool rbp_known;
	uint8_t *stack;
	uint64_t stack_addr;
	size_t stack_size;
	struct map maps[MAX_MAPS];
	size_t nmaps;
	struct module *mods[MAX_MAPS];
	size_t nmods;
};

static int read_stack(struct proc *p, const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	p->stack = malloc(n > 0 ? (size_t)n : 1);
	p->stack_size = fread(p->stack, 1, n > 0 ? (size_t)n : 0, f);
	fclose(f);
	return 0;
}

static int read_state(struct proc *p, const char *path)
{
	char line[1024], a[16], s[512];
	FILE *f = fopen(path, "r");
	uint64_t x, y, z;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "REG %15s %" SCNx64, a, &x) == 2) {
			if (!strcmp(a, "rip"))
				p->rip = x;
			else if (!strcmp(a, "rsp"))
				p->rsp = x;
			else if (!strcmp(a, "rbp"))
				p->rbp = x, p->rbp_known = true;
		} else if (sscanf(line, "STACK %" SCNx64 " %511s", &x, s) == 2) {
			p->stack_addr = x;
			if (read_stack(p, s))
				return -EIO;
		} else if (p->nmaps < MAX_MAPS &&
			   sscanf(line, "MAP %" SCNx64 " %" SCNx64 " %" SCNx64 " %511s",
				  &x, &y, &z, s) == 4) {
			struct map *m = &p->maps[p->nmaps++];

			m->start = x, m->end = y, m->offset = z;
			snprintf(m->path, sizeof(m->path), "%s", s);
		}
	}
	fclose(f);
	return p->stack ? 0 : -EINVAL;
}

static int mem_read(const struct proc *p, uint64_t addr, uint64_t *out)
{
	if (addr < p->stack_addr || addr - p->stack_addr + 8 > p->stack_size)
		return -EFAULT;
	memcpy(out, p->stack + (addr - p->stack_addr), 8);
	return 0;
}

/* PT_LOADs of the file, to turn file offsets into ELF addresses. */
static int module_loads(struct module *m)
{
	int fd = open(m->path, O_RDONLY);
	size_t n;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &n)) {
		elf_end(elf);
		close(fd);
		return -EINVAL;
	}
	for (size_t i = 0; i < n && m->nloads < 16; i++)
		if (gelf_getphdr(elf, (int)i, &m->loads[m->nloads]) &&
		    m->loads[m->nloads].p_type == PT_LOAD)
			m->nloads++;
	elf_end(elf);
	close(fd);
	return 0;
}

/* The module of a mapping, its table compiled on first use. */
static struct module *module_of(struct proc *p, struct map *mp)
{
	char msg[256];
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = sizeof(msg) };
	struct module *m;
	int err;

	for (size_t i = 0; i < p->nmods; i++)
		if (!strcmp(p->mods[i]->path, mp->path))
			return p->mods[i];
	m = calloc(1, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", mp->path);
	ember_buf_init(&m->table, 1u << 30);
	err = unwind_table_compile(m->path, NULL, &o, &m->table);
	if (!err)
		m->b = unwind_table_new(m->table.data, m->table.len, &err);
	if (err || module_loads(m)) {
		printf("error: cannot compile '%s': %s %s\n", m->path, unwind_strerror(err), msg);
		return NULL;
	}
	p->mods[p->nmods++] = m;
	return m;
}

/* ELF address of pc, and its module. */
static int locate(struct proc *p, uint64_t pc, struct module **mod, uint64_t *vaddr)
{
	for (size_t i = 0; i < p->nmaps; i++) {
		struct map *mp = &p->maps[i];
		uint64_t off;

		if (pc < mp->start || pc >= mp->end)
			continue;
		*mod = module_of(p, mp);
		if (!*mod)
			return -EINVAL;
		off = pc - mp->start + mp->offset;
		for (size_t k = 0; k < (*mod)->nloads; k++) {
			const GElf_Phdr *ph = &(*mod)->loads[k];

			if (off >= ph->p_offset && off < ph->p_offset + ph->p_filesz) {
				*vaddr = off - ph->p_offset + ph->p_vaddr;
				return 0;
			}
		}
	}
	printf("error: pc 0x%" PRIx64 " in no mapped ELF segment\n", pc);
	return -ENOENT;
}

static int reg_value(const struct proc *p, unsigned reg, uint64_t *v)
{
	if (reg == 7)
		*v = p->rsp;
	else if (reg == 6 && p->rbp_known)
		*v = p->rbp;
	else
		return -ENOTSUP;
	return 0;
}

static int cfa_of(const struct proc *p, const struct unwind_rule *r, uint64_t vaddr,
		  uint64_t *cfa)
{
	uint64_t base;

	switch (r->cfa_kind) {
	case UNWIND_CFA_REG:
		if (reg_value(p, r->cfa_reg, &base))
			return -ENOTSUP;
		*cfa = base + (int64_t)r->cfa_off;
		return 0;
	case UNWIND_CFA_PLT:
		*cfa = p->rsp + (int64_t)r->cfa_off + ((vaddr & 15) >= (uint64_t)r->cfa_aux ? 8 : 0);
		return 0;
	case UNWIND_CFA_DEREF:
		if (reg_value(p, r->cfa_reg, &base) || mem_read(p, base + (int64_t)r->cfa_off, cfa))
			return -ENOTSUP;
		*cfa += (int64_t)r->cfa_aux;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* The caller's rbp; unknown when the rule does not say. */
static void fp_step(struct proc *p, const struct unwind_rule *r, uint64_t cfa)
{
	uint64_t v = 0, base;
	bool ok;

	switch (unwind_rule_fp_kind(r)) {
	case UNWIND_REG_SAME:
		return;
	case UNWIND_REG_AT_CFA:
		ok = !mem_read(p, cfa + r->fp_off, &v);
		break;
	case UNWIND_REG_VAL_CFA:
		ok = true, v = cfa + r->fp_off;
		break;
	case UNWIND_REG_AT_REG:
		ok = !reg_value(p, r->fp_reg, &base) && !mem_read(p, base + r->fp_off, &v);
		break;
	default:
		ok = false;
	}
	p->rbp = v;
	p->rbp_known = ok;
}

/* The signal frame: registers from the ucontext's mcontext at sp + 40. */
static int signal_step(struct proc *p)
{
	uint64_t mc = p->rsp + 40;

	if (mem_read(p, mc + 8 * 10, &p->rbp) || mem_read(p, mc + 8 * 16, &p->rip) ||
	    mem_read(p, mc + 8 * 15, &p->rsp))
		return -EFAULT;
	p->rbp_known = true;
	return 0;
}

/* One frame up: 1 = outermost reached, 0 = stepped, < 0 = failed. */
static int step(struct proc *p, bool exact)
{
	struct module *m;
	struct unwind_row row;
	uint64_t vaddr, cfa, ra;
	int err = locate(p, p->rip, &m, &vaddr);

	if (err)
		return err;
	err = unwind_table_lookup(m->b, exact ? vaddr : vaddr - 1, &row);
	if (err) {
		printf("error: no row for 0x%" PRIx64 " in '%s'\n", vaddr, m->path);
		return err;
	}
	if (row.rule.cfa_kind == UNWIND_CFA_SIGNAL)
		return signal_step(p) ? -EFAULT : 2;
	if (unwind_rule_ra_kind(&row.rule) == UNWIND_REG_UNDEFINED)
		return 1;
	if (cfa_of(p, &row.rule, vaddr, &cfa) ||
	    unwind_rule_ra_kind(&row.rule) != UNWIND_REG_AT_CFA ||
	    mem_read(p, cfa + row.rule.ra_off, &ra)) {
		printf("error: rule at 0x%" PRIx64 " in '%s' not usable here\n", vaddr, m->path);
		return -ENOTSUP;
	}
	fp_step(p, &row.rule, cfa);
	p->rsp = cfa;
	p->rip = ra;
	return 0;
}

int main(int argc, char **argv)
{
	static struct proc p;
	bool exact = true;

	if (argc != 2 || read_state(&p, argv[1])) {
		fprintf(stderr, "usage: unwind_walk STATE_FILE\n");
		return 2;
	}
	for (int n = 0; n < MAX_FRAMES; n++) {
		int r;

		printf("0x%" PRIx64 "\n", p.rip);
		r = step(&p, exact);
		if (r == 1) {
			printf("end: outermost frame\n");
			return 0;
		}
		if (r < 0)
			return 1;
		exact = r == 2; /* after a signal frame the pc is not a return address */
	}
	printf("error: more than %d frames\n", MAX_FRAMES);
	return 1;
}
