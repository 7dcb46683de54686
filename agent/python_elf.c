/*
 * python_elf.c - CPython in a mapped file, and the layout of its version.
 *
 * A file is a CPython interpreter (the python3.X executable, or the
 * libpython3.X.so an embedding program links) when its dynamic symbols
 * name _PyRuntime (the runtime state: interpreters, threads) and
 * _PyEval_EvalFrameDefault (the eval function: the native frame the
 * Python frames run in).  Its version is Py_Version (PY_VERSION_HEX, a
 * constant the interpreter exports since 3.11), read from the file.  The
 * type objects PyCode_Type, PyUnicode_Type and PyBytes_Type let the
 * reader of a process' memory check that an object is what it should be.
 *
 * The layouts: CPython 3.11 has no table of its own offsets (3.13's
 * _Py_DebugOffsets is the first), so the offsets of each version read
 * are constants here, taken from that version's headers (Include/
 * internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h,
 * cpython/pystate.h, cpython/code.h, cpython/unicodeobject.h);
 * tests/agent/python_layout_check.c compares them with offsetof() in the
 * installed headers.  A version without a layout here is not read: its
 * processes keep their native frames (python_proc.c logs and counts it).
 */
#include "agent_internal.h"

#include <gelf.h>
#include <string.h>

static const struct agent_python_layout layouts[] = {
	{
		.name = "3.11",
		.min = 0x030b0000,
		.max = 0x030c0000,
		.off = {
			.runtime_interp_head = 40,
			.runtime_tstate_current = 576,
			.interp_threads_head = 16,
			.tstate_next = 8,
			.tstate_thread_id = 152,
			.tstate_cframe = 56,
			.cframe_current_frame = 8,
			.frame_code = 32,
			.frame_previous = 48,
			.frame_prev_instr = 56,
			.frame_is_entry = 68,
			.code_adaptive = 184,
		},
		.ob_type = 8,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_firstlineno = 72,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 48,
		.str_compact_data = 72,
		.str_kind_shift = 2,
		.str_compact_bit = 5,
		.str_ascii_bit = 6,
		.bytes_size = 16,
		.bytes_data = 32,
		.linetable = AGENT_PY_LINETABLE_311,
	},
};

const struct agent_python_layout *agent_python_layout(uint32_t version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (version >= layouts[i].min && version < layouts[i].max)
			return &layouts[i];
	return NULL;
}

/* The u32 at ELF address vaddr of section scn (Py_Version), little-endian. */
static int read_u32_at(Elf *elf, Elf_Scn *scn, uint64_t vaddr, uint32_t *out)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    vaddr < sh.sh_addr || vaddr - sh.sh_addr > sh.sh_size - 4 || sh.sh_size < 4)
		return -1;
	d = elf_getdata_rawchunk(elf, (int64_t)(sh.sh_offset + (vaddr - sh.sh_addr)), 4, ELF_T_BYTE);
	if (!d || d->d_size != 4)
		return -1;
	memcpy(out, d->d_buf, 4);
	return 0;
}

struct wanted {
	const char *name;
	size_t off;		/* in struct agent_python_elf */
};

static const struct wanted wanted[] = {
	{ "_PyRuntime", offsetof(struct agent_python_elf, runtime) },
	{ "_PyEval_EvalFrameDefault", offsetof(struct agent_python_elf, eval) },
	{ "PyCode_Type", offsetof(struct agent_python_elf, code_type) },
	{ "PyUnicode_Type", offsetof(struct agent_python_elf, unicode_type) },
	{ "PyBytes_Type", offsetof(struct agent_python_elf, bytes_type) },
};

/* One dynamic symbol: one of the wanted ones, or Py_Version. */
static void take_symbol(Elf *elf, const GElf_Sym *sym, const char *name,
			struct agent_python_elf *py)
{
	if (name[0] != '_' && name[0] != 'P')
		return; /* every wanted name starts with one of them */
	if (!strcmp(name, "Py_Version")) {
		uint32_t v;

		if (!read_u32_at(elf, elf_getscn(elf, sym->st_shndx), sym->st_value, &v))
			py->version = v;
		return;
	}
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		if (!strcmp(name, wanted[i].name)) {
			memcpy((char *)py + wanted[i].off, &sym->st_value, sizeof(uint64_t));
			if (wanted[i].off == offsetof(struct agent_python_elf, eval))
				py->eval_size = sym->st_size;
		}
}

void agent_python_elf_read(Elf *elf, struct agent_python_elf *out)
{
	struct agent_python_elf py = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name)
				take_symbol(elf, &sym, name, &py);
		}
		break;
	}
	py.found = py.runtime && py.eval && py.eval_size;
	*out = py.found ? py : (struct agent_python_elf){ 0 };
}
