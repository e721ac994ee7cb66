/* kinds.c: the table of device kinds ringvm builds, from the one list in devices/kinds.h. */
#include "devices/kinds.h"

#include "devices/kind.h"

#define DEVICE_KIND_DECLARE(name) extern const struct device_kind name##_kind;
#define DEVICE_KIND_ENTRY(name) &name##_kind,

DEVICE_KINDS(DEVICE_KIND_DECLARE)

const struct device_kind *const device_kinds[] = { DEVICE_KINDS(DEVICE_KIND_ENTRY) };
const unsigned int nr_device_kinds = sizeof(device_kinds) / sizeof(device_kinds[0]);
