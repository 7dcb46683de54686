/*
 * elf_info.c - what the agent needs of a mapped file: its build ID (the
 * key of its unwind table and of its symbols on the server) and its
 * PT_LOAD segments (file offset -> ELF virtual address, for the load
 * bias of each mapping), both read through the ELF layer (elfdw.h), and
 * whether it is a CPython (python_elf.c).
 */
#include "agent_internal.h"
#include "elfdw.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>

static int add_load(void *arg, const struct elfdw_load *l)
{
	struct agent_elf_info *e = arg;

	if (e->nloads < AGENT_MAX_LOADS)
		e->loads[e->nloads++] = (struct agent_load){ .offset = l->offset,
							     .vaddr = l->vaddr,
							     .filesz = l->filesz,
							     .exec = (l->flags & PF_X) != 0 };
	return 0;
}

int agent_elf_info_read(int fd, struct agent_elf_info *out)
{
	struct agent_elf_info e = { 0 };
	GElf_Ehdr eh;
	Elf *elf;
	int err, n;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL); /* pread, not a mapping a truncate faults */
	if (!elf)
		return -ENOEXEC;
	err = elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh) ? 0 : -ENOEXEC;
	if (!err) {
		e.machine = eh.e_machine;
		err = elfdw_each_load(elf, add_load, &e) ? -ENOEXEC : 0;
	}
	if (!err && !e.nloads)
		err = -ENOEXEC;
	if (!err)
		agent_python_elf_read(elf, &e.python);
	if (!err) {
		n = elfdw_build_id(elf, e.build_id, sizeof(e.build_id));
		if (n > 0) {
			e.build_id_len = (size_t)n;
			ember_hex_encode(e.build_id, e.build_id_len, e.build_id_hex);
		}
	}
	elf_end(elf);
	if (!err)
		*out = e;
	return err;
}
int agent_elf_offset_to_vaddr(const struct agent_elf_info *e, uint64_t off, uint64_t *vaddr)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < e->nloads; i++) {
			const struct agent_load *l = &e->loads[i];

			if (pass == 0 && !l->exec)
				continue;
			/* a mapping starts at a page boundary, often below p_offset */
			if (off + 0x1000 > l->offset && off < l->offset + l->filesz) {
				*vaddr = l->vaddr + off - l->offset;
				return 0;
			}
		}
	}
	return -ENOENT;
}
