/*
 * crc32.c - the blob checksum: CRC-32/ISO-HDLC, the CRC of zlib's
 * crc32(), gzip, PNG and Go's hash/crc32.ChecksumIEEE (reflected
 * polynomial 0xEDB88320, initial and final XOR 0xFFFFFFFF), so an agent
 * in any language verifies a blob with its standard library.
 *
 * Slicing-by-8 (Intel, 2006): eight table lookups per 8 input bytes.
 * The 8 KiB of tables are built on the stack for each call (about 10 us),
 * which keeps the component free of global state.
 */
#include "unwind_internal.h"

static void crc_tables(uint32_t t[8][256])
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & -(c & 1));
		t[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int s = 1; s < 8; s++)
			t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
}

uint32_t unwind_crc32(uint32_t crc, const void *data, size_t len)
{
	uint32_t t[8][256];
	const uint8_t *p = data;

	crc_tables(t);
	crc = ~crc;
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		      t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return ~crc;
}
