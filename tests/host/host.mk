# tests/host/host.mk: every host script test, in one list. Included by tests/tests.mk.
#
# A host test is a script (shell or Python) that prints TAP and runs on this host without the KVM lab (the boot tests'
# payloads are tiny freestanding guests that this host's /dev/kvm runs). Registered with one line:
#   HOST_TESTS += SCRIPT              run once: B=build RINGVM=build/ringvm SCRIPT
#   SAN_HOST_TESTS += SCRIPT          (also in HOST_TESTS) once more with the ASan+UBSan build:
#                                     B=build/san RINGVM=build/san/ringvm SCRIPT
# tests/run (ONLY=host) runs them in this order. Scripts that boot guests live in tests/boot/, the
# others in tests/host/ (a benchmark's own check stays with its benchmark, the lab's with the lab).

# Checks of tools and scripts, no VM.
# ACPICA's own tools (iasl, acpiexec) read ringvm's ACPI tables back (tests/support/acpi_dump.c).
HOST_TESTS += tests/host/acpi_iasl.sh
# The terminal driver of the interactive tests.
HOST_TESTS += tests/host/pty-drive.sh
# The private apt configuration for another suite reads the host's sources in both formats.
HOST_TESTS += tests/host/apt-suite.sh
# The real PID 1 without a kernel, in namespaces (also `make guest-smoke`).
HOST_TESTS += tests/host/guest-init.sh
# The device benchmark's quick run (both builds, by itself).
HOST_TESTS += tests/bench/device-test.sh
# Its goal verdicts, on made-up results whose answers are known.
HOST_TESTS += tests/bench/device-goals-test.sh
# make install into a DESTDIR; the example built there with pkg-config; the build's flags.
HOST_TESTS += tests/host/install.sh
# That example booted (after install.sh, which builds it).
HOST_TESTS += tests/boot/install-boot.sh

# The CLI and the library with firmware payloads, both builds.
# state.py: the SIGUSR2 state report on running payloads.
BOOT_HOST_TESTS := $(addprefix tests/boot/,firmware.sh cli.sh gdb.sh state.py tree.sh serve.sh privilege.sh \
	attack.sh jail.sh)
HOST_TESTS += $(BOOT_HOST_TESTS)
SAN_HOST_TESTS += $(BOOT_HOST_TESTS)

# The lab's own tests boot a few labs (on every host: a hardware-KVM host can run it too).
HOST_TESTS += tests/lab/selftest

print-host-tests:
	@echo $(HOST_TESTS)
print-san-host-tests:
	@echo $(SAN_HOST_TESTS)
# The host scripts that start guests on /dev/kvm (the boot scripts and install.sh's example): on a
# host with no /dev/kvm at all, tests/run runs them in two KVM labs.
KVM_HOST_TESTS := $(BOOT_HOST_TESTS) tests/boot/install-boot.sh
print-boot-host-tests:
	@echo $(KVM_HOST_TESTS)
.PHONY: print-host-tests print-san-host-tests print-boot-host-tests
