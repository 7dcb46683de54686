/*
 * fuzz_upload.c - libFuzzer target for the upload validation path: the
 * bytes of an upload go through elf-inspect as the server does it
 * (inspect, then the DWARF source names and a section lookup from a file
 * descriptor), and the same bytes as a request path through the router.
 */
#include "api_internal.h"
#include "inspect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static int count_name(const char *path, void *arg)
{
	(*(size_t *)arg) += strlen(path) > 0;
	return 0;
}

static void inspect_as_file(const uint8_t *data, size_t size)
{
	uint64_t off, len, flags;
	size_t names = 0;
	int fd = memfd_create("fuzz-upload", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size) {
		inspect_list_sources(fd, count_name, &names);
		inspect_find_section(fd, ".debug_info", &off, &len, &flags);
	}
	close(fd);
}

static void route_as_path(const uint8_t *data, size_t size)
{
	char *url = malloc(size + 1);
	struct api_route r;

	if (!url)
		return;
	memcpy(url, data, size);
	url[size] = '\0';
	api_route_parse(url, &r);
	free(url);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inspect_info info;

	ember_log_set_handler(quiet, NULL);
	route_as_path(data, size);
	if (inspect_elf_mem(data, size, &info) == 0)
		inspect_as_file(data, size);
	return 0;
}
