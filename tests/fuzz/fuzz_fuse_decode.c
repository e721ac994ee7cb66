/* fuzz_fuse_decode.c: libFuzzer target for the FUSE request decoder (every name and size check). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "devices/fs/fuse_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuse_decode_ctx ctx = { .minor = FUSE_KERNEL_MINOR_VERSION };
	struct fuse_req r;
	size_t have;

	/* The first byte picks the session state and how much of the request was gathered. */
	if (size < 1)
		return 0;
	ctx.minor = (uint32_t)(data[0] & 0x3f);
	ctx.setxattr_ext = data[0] >> 7;
	data++;
	size--;
	have = size;
	if ((data[-1] & 0x40) && size > 80)
		have = 80; /* a WRITE whose payload stays in guest memory */
	if (fuse_decode(data, have, size, &ctx, &r) == 0) {
		/* Touch what the decoder promised is in bounds, so ASan sees any lie. */
		volatile size_t sink = 0;
		if (r.name)
			sink += strlen(r.name);
		if (r.name2)
			sink += strlen(r.name2);
		if (r.data && r.data_len)
			sink += ((const uint8_t *)r.data)[r.data_len - 1];
		(void)sink;
	}
	return 0;
}
