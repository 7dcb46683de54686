/*
 * libelf_only.c - the check that the unwind compiler and the ELF/DWARF
 * layer need libelf only, never libdw (the eBPF agent links them).
 *
 * The build links this program with ember_unwind and ember_elfdw whole
 * (every object of both archives, used or not), ember_common and libelf:
 * if either needed a symbol of libdw, the link fails and so does the
 * build.  Run, it compiles the unwind table of the ELF given and reads
 * its build ID through the layer (so the test can fail on a wrong
 * answer, too), then reads its own symbol tables and fails if any libdw
 * symbol (dwarf_*, dwelf_*, dwfl_*) was linked in anyway, say through a
 * dependency that brought libdw along.
 *
 *   libelf_only ELF        prints "build-id HEX rows N", exit 0
 */
#include "elfdw.h"
#include "unwind.h"
#include "common.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool is_libdw(const char *name)
{
	return strncmp(name, "dwarf_", 6) == 0 || strncmp(name, "dwelf_", 6) == 0 ||
	       strncmp(name, "dwfl_", 5) == 0 || strncmp(name, "__libdw", 7) == 0;
}

/* Symbols of libdw in this program's .symtab or .dynsym: how many. */
static int libdw_symbols(void)
{
	int fd = open("/proc/self/exe", O_RDONLY), found = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) == STT_FILE || /* "dwarf_die.c" */
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (is_libdw(name)) {
				fprintf(stderr, "libelf_only: '%s' is linked in\n", name);
				found++;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return elf ? found : -1;
}

static int build_id_hex(const char *path, char *hex)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	int fd = open(path, O_RDONLY), n = -1;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (elf)
		n = elfdw_build_id(elf, id, sizeof(id));
	if (n > 0)
		ember_build_id_to_hex(id, (size_t)n, hex);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct unwind_compile_stats stats = { 0 };
	char hex[2 * EMBER_BUILD_ID_MAX + 1], why[256] = "";
	struct unwind_compile_opts opts = { .sz = sizeof(opts), .err_msg = why,
					    .err_msg_size = sizeof(why), .stats = &stats };
	struct ember_buf out;
	int err, n;

	if (argc != 2) {
		fprintf(stderr, "usage: libelf_only ELF\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	n = libdw_symbols();
	if (n != 0) {
		fprintf(stderr, "libelf_only: %s\n",
			n < 0 ? "cannot read my own symbols" : "libdw is linked in");
		return 1;
	}
	if (build_id_hex(argv[1], hex)) {
		fprintf(stderr, "libelf_only: '%s': no build ID\n", argv[1]);
		return 1;
	}
	ember_buf_init(&out, (size_t)1 << 30);
	err = unwind_table_compile(argv[1], NULL, &opts, &out);
	ember_buf_release(&out);
	if (err) {
		fprintf(stderr, "libelf_only: '%s': %s (%s)\n", argv[1], unwind_strerror(err), why);
		return 1;
	}
	printf("build-id %s rows %zu\n", hex, (size_t)stats.rows);
	return 0;
}
