/* fs_guest.c: INIT, LOOKUP, OPEN as Linux's virtio-fs sends them, through mmio_driver. */
#include "tests/support/fs_guest.h"

#include <string.h>

#include "tests/support/fuse_req.h"

int fsg_open_file(struct mmio_driver *d, unsigned int q, const char *name, uint32_t open_flags,
		  uint64_t *nodeid, uint64_t *fh)
{
	uint8_t req[256], rep[4096];
	struct fuse_init_in init = { .major = 7, .minor = 38, .max_readahead = 131072,
				     .flags = FUSE_MAX_PAGES | FUSE_INIT_EXT };
	struct fuse_open_in oin = { .flags = open_flags };
	uint32_t len;

	len = fuse_mkreq(req, FUSE_INIT, 0, &init, sizeof(init));
	if (md_roundtrip(d, q, req, len, NULL, 4096, NULL, rep) <= 16 || fuse_reply_error(rep))
		return -1;
	len = fuse_mkreq(req, FUSE_LOOKUP, 1, name, (uint32_t)strlen(name) + 1);
	if (md_roundtrip(d, q, req, len, NULL, 4096, NULL, rep) <= 16 || fuse_reply_error(rep))
		return -2;
	*nodeid = ((const struct fuse_entry_out *)(rep + 16))->nodeid;
	len = fuse_mkreq(req, FUSE_OPEN, *nodeid, &oin, sizeof(oin));
	if (md_roundtrip(d, q, req, len, NULL, 4096, NULL, rep) <= 16 || fuse_reply_error(rep))
		return -3;
	*fh = ((const struct fuse_open_out *)(rep + 16))->fh;
	return 0;
}
