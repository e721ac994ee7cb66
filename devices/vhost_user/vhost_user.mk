# devices/vhost_user: the vhost-user back-end transport (ringvm serve). Included by devices/devices.mk.

# The message decoder (pure).
VU_SRCS := devices/vhost_user/vu_decode.c
LIB_SRCS += $(VU_SRCS)

UNIT_TESTS += vu_decode
test_vu_decode_SRCS := devices/vhost_user/vu_decode.c tests/unit/test_vu_decode.c

# libFuzzer: the decoder, header and message rules, with a seed corpus in fuzz-seeds/vu_decode.
FUZZERS += vu_decode
fuzz_vu_decode_SRCS := devices/vhost_user/vu_decode.c devices/vhost_user/fuzz_vu_decode.c
