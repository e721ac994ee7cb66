/* fuzz_gdb_packet.c: libFuzzer target: the gdb packet receiver on any bytes, and frame round trips. */
#include "vmm/gdb_packet.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct gdb_rx rx, back_rx;
static char frame[2 * GDB_PACKET_MAX + 8];
static uint8_t bin[GDB_PACKET_MAX];

/* Every packet received must frame back into a packet with the same payload, and its other
   decoders must stay inside their buffers and agree with what they return. */
static void fz_packet(const char *p, size_t len)
{
	if (len > GDB_PACKET_MAX || p[len] != '\0')
		__builtin_trap();
	ssize_t n = gdb_frame(p, len, frame, sizeof(frame));
	if (n < 0)
		__builtin_trap(); /* the frame buffer holds any payload, escaped */
	gdb_rx_init(&back_rx);
	enum gdb_rx_event e = GDB_RX_NONE;
	for (ssize_t i = 0; i < n; i++)
		e = gdb_rx_feed(&back_rx, (uint8_t)frame[i]);
	if (e != GDB_RX_PACKET)
		__builtin_trap();
	ssize_t u = gdb_unescape(back_rx.buf, back_rx.len, bin, sizeof(bin));
	if (u != (ssize_t)len || memcmp(bin, p, len) != 0)
		__builtin_trap();
	(void)gdb_unescape(p, len, bin, sizeof(bin));
	ssize_t h = gdb_hex_decode(p, len, bin, sizeof(bin));
	if (h >= 0 && (size_t)h * 2 != len)
		__builtin_trap();
	const char *q = p;
	uint64_t v;
	if (gdb_parse_hex(&q, &v) == 0 && (q == p || q > p + 16))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gdb_rx_init(&rx);
	for (size_t i = 0; i < size; i++)
		if (gdb_rx_feed(&rx, data[i]) == GDB_RX_PACKET)
			fz_packet(rx.buf, rx.len);
	return 0;
}
