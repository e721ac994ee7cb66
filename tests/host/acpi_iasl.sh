#!/bin/sh
# acpi_iasl.sh: ACPICA's own tools (iasl, acpiexec) read ringvm's ACPI tables back; TAP output.
# Run from the repository root with B=<build dir> (default build): needs $B/tests/acpi-dump.
set -u
B=${B:-build}
DUMP=$B/tests/acpi-dump
n=0
failed=0

check() { # check "what" command...: one TAP line for the command's status
	what=$1
	shift
	n=$((n + 1))
	if "$@" >/dev/null 2>&1; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=$((failed + 1))
	fi
}

finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit $?
}

for tool in iasl acpiexec; do
	if ! command -v $tool >/dev/null; then
		check "$tool is installed (Debian package acpica-tools)" false
		finish
	fi
done
if [ ! -x "$DUMP" ]; then
	check "$DUMP is built" false
	finish
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# The sample machine of acpi-dump: 2 vCPUs, 3 virtio-mmio devices at 0xd0000000 + i * 0x1000,
# GSIs 16 + i.
check "acpi-dump writes the tables (2 CPUs, 3 devices)" "$DUMP" "$T"
for t in xsdt facp apic dsdt; do
	check "iasl -d $t.dat: disassembles without errors" \
		sh -c "cd '$T' && iasl -d $t.dat >$t.log 2>&1 && grep -qE 'Formatted output|ASL Output' $t.log &&
			! grep -qiE '^(Error|Warning) ' $t.log"
done
[ -f "$T/dsdt.dsl" ] || finish

# Within one Device (...) block of the disassembly, does a pattern occur?
in_device() { # in_device NAME ERE
	sed -n "/Device ($1)/,/^        }/p" "$T/dsdt.dsl" | grep -qE "$2"
}
check "DSDT: \\_S5 is Package { 0x05, ... }" \
	sh -c "grep -A3 'Name (\\\\_S5, Package' '$T/dsdt.dsl' | grep -q '0x05'"
check "DSDT: COM1 is EisaId PNP0501" in_device COM1 'EisaId \("PNP0501"\)'
check "DSDT: COM1 decodes I/O 0x3F8, 8 ports" \
	sh -c "sed -n '/Device (COM1)/,/^        }/p' '$T/dsdt.dsl' | grep -A4 'IO (Decode16' |
		tr -d ' \n' | grep -q '0x03F8,//RangeMinimum0x03F8,//RangeMaximum0x01,//Alignment0x08,'"
check "DSDT: COM1 interrupt is GSI 4, edge, active-high" \
	sh -c "sed -n '/Device (COM1)/,/^        }/p' '$T/dsdt.dsl' |
		grep -A2 'Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive' | grep -q '0x00000004'"
check "DSDT: PEVT is QEMU's pvpanic (QEMU0001) on I/O port 0x505, 1 port" \
	sh -c "sed -n '/Device (PEVT)/,/^        }/p' '$T/dsdt.dsl' | tr -d ' \n' |
		grep -q 'Name(_HID,\"QEMU0001\").*IO(Decode16,0x0505,//RangeMinimum0x0505,//RangeMaximum0x01,//Alignment0x01,'"
check "DSDT: exactly 3 LNRO0005 devices" \
	sh -c "[ \$(grep -c 'Name (_HID, \"LNRO0005\")' '$T/dsdt.dsl') -eq 3 ]"
for i in 0 1 2; do
	block=$(sed -n "/Device (V00$i)/,/^        }/p" "$T/dsdt.dsl" | tr -d ' \n')
	check "DSDT: V00$i is LNRO0005 with _UID $i" \
		sh -c "echo '$block' | grep -q 'Name(_HID,\"LNRO0005\")' &&
			echo '$block' | grep -qE 'Name\(_UID,(Zero|One|0x0$i)\)'"
	check "DSDT: V00$i has Memory32Fixed (ReadWrite, 0xD000${i}000, 0x1000)" \
		sh -c "echo '$block' | grep -q 'Memory32Fixed(ReadWrite,0xD000${i}000,//AddressBase0x00001000,'"
	check "DSDT: V00$i interrupt is GSI $((16 + i)), edge, active-high, exclusive" \
		sh -c "echo '$block' | grep -q 'Interrupt(ResourceConsumer,Edge,ActiveHigh,Exclusive,,,){0x0000001$i,}'"
done

# The same DSDT written in ASL and compiled by iasl (namepath optimisation off, so \_S5 keeps its
# root prefix) must be byte-for-byte the AML we generate, after the 36-byte header.
cat >"$T/ref.asl" <<'EOF'
DefinitionBlock ("", "DSDT", 2, "RINGVM", "RINGVM  ", 1)
{
    Name (\_S5, Package (0x04) { 5, 0, 0, 0 })
    Scope (\_SB)
    {
        Device (COM1)
        {
            Name (_HID, EisaId ("PNP0501"))
            Name (_UID, 0)
            Name (_CRS, ResourceTemplate () {
                IO (Decode16, 0x03F8, 0x03F8, 0x01, 0x08)
                Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 4 }
            })
        }
        Device (PEVT)
        {
            Name (_HID, "QEMU0001")
            Name (_CRS, ResourceTemplate () {
                IO (Decode16, 0x0505, 0x0505, 0x01, 0x01)
            })
        }
        Device (V000)
        {
            Name (_HID, "LNRO0005")
            Name (_UID, 0)
            Name (_CRS, ResourceTemplate () {
                Memory32Fixed (ReadWrite, 0xD0000000, 0x1000)
                Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 16 }
            })
        }
        Device (V001)
        {
            Name (_HID, "LNRO0005")
            Name (_UID, 1)
            Name (_CRS, ResourceTemplate () {
                Memory32Fixed (ReadWrite, 0xD0001000, 0x1000)
                Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 17 }
            })
        }
        Device (V002)
        {
            Name (_HID, "LNRO0005")
            Name (_UID, 2)
            Name (_CRS, ResourceTemplate () {
                Memory32Fixed (ReadWrite, 0xD0002000, 0x1000)
                Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive) { 18 }
            })
        }
    }
}
EOF
check "DSDT body is byte-identical to iasl's compilation of the same ASL" \
	sh -c "cd '$T' && iasl -on -p ref ref.asl >ref.log 2>&1 &&
		tail -c +37 ref.aml >ref.body && tail -c +37 dsdt.dat >dsdt.body && cmp ref.body dsdt.body"

# FADT, as decoded by the disassembler.
fadt_has() { grep -qE "$1" "$T/facp.dsl"; }
check "FADT: revision 6, 276 bytes" sh -c "grep -q 'Revision : 06' '$T/facp.dsl' &&
	grep -q 'Table Length : 00000114' '$T/facp.dsl'"
check "FADT: Hardware Reduced" fadt_has 'Hardware Reduced \(V5\) : 1'
check "FADT: Reset Register Supported, SystemIO 0x602 value 01" \
	sh -c "grep -q 'Reset Register Supported (V2) : 1' '$T/facp.dsl' &&
		grep -A5 'Reset Register :' '$T/facp.dsl' | grep -q 'Address : 0000000000000602' &&
		grep -q 'Value to cause reset : 01' '$T/facp.dsl'"
check "FADT: no 8042, no VGA, no CMOS RTC" \
	sh -c "grep -q '8042 Present on ports 60/64 (V2) : 0' '$T/facp.dsl' &&
		grep -q 'VGA Not Present (V4) : 1' '$T/facp.dsl' &&
		grep -q 'CMOS RTC Not Present (V5) : 1' '$T/facp.dsl'"
check "FADT: sleep control 8-bit SystemIO 0x600, status 0x601" \
	sh -c "grep -A5 'Sleep Control Register :' '$T/facp.dsl' | tr -d ' \n' |
			grep -q 'SpaceID:01\[SystemIO\].*BitWidth:08.*Address:0000000000000600' &&
		grep -A5 'Sleep Status Register :' '$T/facp.dsl' | tr -d ' \n' |
			grep -q 'SpaceID:01\[SystemIO\].*BitWidth:08.*Address:0000000000000601'"
dsdt_addr=$(grep -E '^\[08Ch 0140   8\] +DSDT Address' "$T/facp.dsl" | sed 's/.*: //')
check "FADT: X_DSDT is set ($dsdt_addr)" sh -c "[ -n '$dsdt_addr' ] && [ '$dsdt_addr' != 0000000000000000 ]"

# MADT: one LAPIC per CPU, for 2 and for 64 CPUs.
check "MADT (2 CPUs): 2 Processor Local APIC entries" \
	sh -c "[ \$(grep -c 'Subtable Type : 00 \[Processor Local APIC\]' '$T/apic.dsl') -eq 2 ]"
check "MADT: one I/O APIC at FEC00000, IRQ0->GSI2 override, LAPIC NMI on LINT1" \
	sh -c "[ \$(grep -c 'Subtable Type : 01 \[I/O APIC\]' '$T/apic.dsl') -eq 1 ] &&
		grep -q 'Address : FEC00000' '$T/apic.dsl' &&
		grep -A4 'Interrupt Source Override' '$T/apic.dsl' | grep -q 'Interrupt : 00000002' &&
		grep -q 'Interrupt Input LINT : 01' '$T/apic.dsl'"
mkdir -p "$T/64"
check "MADT (64 CPUs): 64 Processor Local APIC entries" \
	sh -c "'$DUMP' '$T/64' 64 && cd '$T/64' && iasl -d apic.dat >/dev/null 2>&1 &&
		[ \$(grep -c 'Subtable Type : 00 \[Processor Local APIC\]' apic.dsl) -eq 64 ]"

# acpiexec loads the tables into ACPICA's interpreter (the code Linux runs), evaluates \_S5 and
# decodes every _CRS with its resource manager.
(cd "$T" && acpiexec -b 'evaluate \_S5; resources \_SB.COM1; resources \_SB.V000;
	resources \_SB.V001; resources \_SB.V002' facp.dat apic.dat dsdt.dat >exec.log 2>&1)
check "acpiexec loads the tables: 5 devices, no errors" \
	sh -c "grep -q '5 Devices' '$T/exec.log' && ! grep -qE 'ACPI Error|ACPI Exception' '$T/exec.log'"
check "acpiexec: \\_S5 evaluates to a package whose first element is 5" \
	sh -c "grep -A2 'Contains 4 Elements' '$T/exec.log' | grep -q 'Integer\] = 0000000000000005'"
check "acpiexec: COM1 resources are I/O 0x3F8 and interrupt 4" \
	sh -c "tr -d ' \n' <'$T/exec.log' | grep -q 'AddressMinimum:03F8AddressMaximum:03F8Alignment:01AddressLength:08.*Edge.*Dword00:00000004'"
for i in 0 1 2; do
	check "acpiexec: V00$i resources are memory 0xD000${i}000+0x1000, edge GSI $((16 + i))" \
		sh -c "tr -d ' \n' <'$T/exec.log' | grep -q \
'Address:D000${i}000AddressLength:00001000\[01\]ExtendedIRQResourceType:ResourceConsumerTriggering:EdgePolarity:ActiveHighSharing:Exclusive.*Dword00:0000001$i'"
done
finish
