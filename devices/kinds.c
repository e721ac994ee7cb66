/* kinds.c: the table of device kinds ringvm builds; adding a kind is its folder and one line here. */
#include "devices/kind.h"

/*
 * The kinds in attach order, one line each: X(entry) names the `const struct device_kind` its
 * folder defines. The guest numbers devices by this order, so a new kind goes where its devices
 * should appear; the command's streams stay last.
 */
#define DEVICE_KINDS(X)                                                                            \
	X(blk_kind)     /* devices/blk: the disks, vda, vdb, ... in config order */                \
	X(fs_kind)      /* devices/fs: the root, then the shares */                                 \
	X(console_kind) /* devices/console: the command's streams and the signal port */

#define DEVICE_KIND_DECLARE(k) extern const struct device_kind k;
#define DEVICE_KIND_ENTRY(k) &k,

DEVICE_KINDS(DEVICE_KIND_DECLARE)

const struct device_kind *const device_kinds[] = { DEVICE_KINDS(DEVICE_KIND_ENTRY) };
const unsigned int nr_device_kinds = sizeof(device_kinds) / sizeof(device_kinds[0]);
