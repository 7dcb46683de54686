/*
 * frame_name.c - the names a symbolized frame takes in a profile
 * (symsvc.h, symsvc_frame_name): written once for ingest
 * (pprof_symbolize.c) and the profile service's query-time resolver.
 */
#include "symsvc_internal.h"

void symsvc_frame_name(const struct sym_index *idx, const struct sym_frame *f, bool demangle,
		       struct symsvc_frame_name *out)
{
	const char *dm = demangle ? sym_frame_demangled(idx, f, true) : NULL;
	const char *raw = f->name ? f->name : "??";

	*out = (struct symsvc_frame_name){ .function = dm ? dm : raw,
					   .system_name = raw,
					   .filename = f->file ? f->file : "",
					   .line = f->line,
					   .start_line = f->decl_line };
}
