/* kinds.h: the one list of the device kinds ringvm builds; adding a kind is its folder and one line here. */
#ifndef RINGVM_DEVICE_KINDS_H
#define RINGVM_DEVICE_KINDS_H

/*
 * X(NAME), one line per kind, in attach order: the guest numbers devices by this order, so a new
 * kind goes where its devices should appear; the command's streams stay last. NAME is the kind's
 * folder, devices/NAME/, which defines
 *   - `const struct device_kind NAME_kind` (devices/kind.h; NAME_kind.c, in libringvm): listed by
 *     devices/kinds.c;
 *   - `const struct cli_kind NAME_cli` (vmm/cli_kind.h; NAME_cli.c, in the ringvm binary only):
 *     listed by vmm/cli_kinds.c, an empty one when the CLI has nothing of the kind's to parse;
 *   - devices/NAME/NAME.mk, its make fragment: devices/devices.mk reads the names off this list
 *     and includes each (so keep one `X(NAME)` per line).
 */
#define DEVICE_KINDS(X)                                                                            \
	X(blk)     /* the disks, vda, vdb, ... in config order */                                   \
	X(fs)      /* the root, then the shares */                                                  \
	X(console) /* the command's streams and the signal port */

#endif
