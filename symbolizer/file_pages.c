/*
 * file_pages.c - handing pages of the mapped ELF file back to the kernel
 * once the index build is done with them.  The build reads .debug_info
 * and .debug_line once, unit by unit, from libelf's mapping of the file;
 * left mapped, every page read counts in the process's peak RSS (20 MB of
 * DIEs for objdump).  Dropped (MADV_DONTNEED) after each unit, a page
 * costs nothing more, and if anything reads it again (a reference into an
 * earlier unit, libdw walking a unit) it comes back from the page cache
 * unchanged.
 *
 * That holds only for a read-only mapping of the file: dropping pages of
 * memory libelf copied the file into would zero them.  So drops happen
 * only once /proc/self/maps shows the image is such a mapping of the very
 * file (same inode); otherwise they are no-ops.
 */
#include "sym_internal.h"

#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Drops come in steps of at least this: each madvise makes every CPU
 * running the process flush its TLB, which is slow in a VM.  A smaller
 * file is never dropped from, and not even checked. */
#define DROP_STEP ((size_t)4 << 20)

/* Whether [lo, lo + size) lies in one read-only private mapping of the
 * file with inode ino. */
static bool mapped_read_only(const uint8_t *lo, size_t size, uint64_t ino)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool ok = false;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end, inode;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu", &start, &end, perms,
			   &inode) != 4)
			continue;
		if ((uintptr_t)lo < start || (uintptr_t)lo >= end)
			continue;
		ok = (uintptr_t)lo + size <= end && perms[0] == 'r' &&
		     perms[1] == '-' && perms[3] == 'p' && inode == ino;
		break;
	}
	if (f)
		fclose(f);
	return ok;
}

void sym_pages_init(struct sym_pages *m, const struct sym_elf *e)
{
	struct stat st;
	size_t size = 0;
	const uint8_t *raw = (const uint8_t *)elf_rawfile(e->elf, &size);
	long page = sysconf(_SC_PAGESIZE);

	*m = (struct sym_pages){ NULL, NULL, 0 };
	if (!raw || size < DROP_STEP || page <= 0 || fstat(e->fd, &st) ||
	    !mapped_read_only(raw, size, (uint64_t)st.st_ino))
		return;
	*m = (struct sym_pages){ raw, raw + size, (size_t)page };
}

static void pages_drop(const struct sym_pages *m, const void *from,
		       const void *to)
{
	uintptr_t lo = (uintptr_t)from, hi = (uintptr_t)to;

	if (!m->page || lo < (uintptr_t)m->lo || hi > (uintptr_t)m->hi)
		return;
	/* from the page holding from (what precedes it is done), up to the
	 * page holding to (where the next unit starts) */
	lo = lo / m->page * m->page;
	hi = hi / m->page * m->page;
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void sym_pages_done(const struct sym_pages *m, const uint8_t **from,
		    const void *to)
{
	const uint8_t *upto = to;

	if (!*from || upto < *from || (size_t)(upto - *from) < DROP_STEP)
		return;
	pages_drop(m, *from, upto);
	*from = upto;
}
