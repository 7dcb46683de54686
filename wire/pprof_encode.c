/*
 * pprof_encode.c - a profile back to profile.proto bytes (protobuf-c's
 * packer), raw or gzipped as Go's pprof writes them, appended to a capped
 * struct ember_buf.  The profile is valid by construction (pprof_decode
 * checked it, every edit keeps it), so nothing is checked here; a failure
 * is the cap or memory, and the buffer is put back as it was.
 */
#include "wire_internal.h"

int pprof_encode(const struct pprof_profile *p, bool gzip, struct ember_buf *out)
{
	struct wire_pb_sink sink;
	size_t before = out->len;
	int err;

	if (!gzip && protobuf_c_message_get_packed_size(&p->msg->base) > out->cap - out->len)
		return -E2BIG;
	if (gzip) {
		err = wire_sink_gzip_init(&sink, out);
		if (err)
			return err;
	} else {
		wire_sink_raw_init(&sink, out);
	}
	protobuf_c_message_pack_to_buffer(&p->msg->base, &sink.base);
	err = wire_sink_finish(&sink);
	if (err) {
		out->len = before;
		if (out->data)
			out->data[before] = '\0';
	}
	return err;
}
