# tests/bench/bench.mk: the native device benchmark (`make bench-device`): a vhost-user front-end
# driver (tests/bench/device/) and its harness (tests/bench/device.sh). Included from tests/tests.mk.

DEVICE_BENCH_SRCS := $(addprefix tests/bench/device/,blk_client.c device.c dmem.c files.c \
	fuse_client.c probe.c setup.c stats.c target.c dvq.c vu_client.c workload.c)
DEVICE_BENCH := $(B)/bench/device-driver
$(DEVICE_BENCH): $(addprefix $(B)/obj/,$(DEVICE_BENCH_SRCS:.c=.o))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
ALL_TARGETS += $(DEVICE_BENCH)

# make bench-device: every peer, ROUNDS rounds (see tests/bench/README.md); natively, no KVM lab.
.PHONY: bench-device
bench: bench-device
bench-device: all
	$(Q)tests/bench/device.sh
# tests/bench/device-test.sh (a host test, tests/host/host.mk): the quick mode checks the harness
# (every peer starts, every reply verified, results parse).
DEPS_PKGS += gnuplot-nox jq bsdextrautils qemu-system-common util-linux

# Its ring is unit-tested (tests/unit/unit.mk, bench_dvq).
