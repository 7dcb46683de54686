/*
 * block_name.c - blocks are named by the sha256 of their bytes (nettle)
 * and written through the block storage, whose put of a name that exists
 * is success: a block already there is taken to hold exactly these bytes.
 * A 128-bit non-cryptographic hash would let a client who can shape a
 * profile (profile content is outside input) shape a block that collides
 * with another, which the store would then take as written and drop the
 * head it came from: acknowledged profiles lost.  So the name is a
 * collision-resistant hash, and the bytes of every put are read back
 * whole and compared: an object of other content under the name (a
 * damaged file, another writer's object) fails the write, and the head
 * stays in the log until a write succeeds.
 */
#include "pstore_block.h"

#include <nettle/sha2.h>
#include <stdio.h>

static int name_in(const char *dir, int64_t partition, const void *data, size_t len,
		   char name[PS_BLOCK_NAME_MAX])
{
	uint8_t digest[SHA256_DIGEST_SIZE];
	char hex[2 * SHA256_DIGEST_SIZE + 1];
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, len, data);
	sha256_digest(&c, sizeof(digest), digest);
	ember_hex_encode(digest, sizeof(digest), hex);
	snprintf(name, PS_BLOCK_NAME_MAX, "%s/%016llx-%s.pblk", dir,
		 (unsigned long long)partition, hex);
	return 0;
}

int pstore_block_name(int64_t partition, const void *data, size_t len,
		      char name[PS_BLOCK_NAME_MAX])
{
	return name_in("blocks", partition, data, len, name);
}

int pstore_rollup_name(int64_t partition, const void *data, size_t len,
		       char name[PS_BLOCK_NAME_MAX])
{
	return name_in("rollups", partition, data, len, name);
}

int pstore_block_put(const struct pstore_blockio *io, const char *name, const void *data,
		     size_t len, struct ember_diag *d)
{
	struct ember_buf back;
	int err = io->put(io->ctx, name, data, len);

	if (err)
		return EMBER_FAIL(d, err, "store: cannot write block '%s': %s", name,
				  pstore_strerror(err));
	ember_buf_init(&back, len + 1);
	err = io->get(io->ctx, name, 0, 0, &back);
	if (err == -E2BIG || (!err && (back.len != len || memcmp(back.data, data, len))))
		err = EMBER_FAIL(d, -PSTORE_ERR_CORRUPT,
				 "store: block '%s' exists with other content (%s bytes, %zu "
				 "written): not taken as written", name,
				 err ? "more" : "other", len);
	else if (err)
		err = EMBER_FAIL(d, err, "store: cannot read block '%s' back: %s", name,
				 pstore_strerror(err));
	ember_buf_release(&back);
	return err;
}
