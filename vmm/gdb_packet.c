/* gdb_packet.c: the gdb remote protocol's framing and hex, as pure functions (no I/O, no state but rx). */
#include "vmm/gdb_packet.h"

#include <errno.h>
#include <string.h>

#define GDB_ESCAPE '}'
#define GDB_ESCAPE_XOR 0x20
#define GDB_INTERRUPT 0x03

void gdb_rx_init(struct gdb_rx *rx)
{
	rx->state = GDB_RX_IDLE;
	rx->len = 0;
	rx->sum = 0;
	rx->csum = 0;
	rx->bad = 0;
	rx->buf[0] = '\0';
}

int gdb_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void rx_start(struct gdb_rx *rx)
{
	gdb_rx_init(rx);
	rx->state = GDB_RX_BODY;
}

enum gdb_rx_event gdb_rx_feed(struct gdb_rx *rx, uint8_t byte)
{
	int d;
	switch (rx->state) {
	case GDB_RX_IDLE:
		if (byte == '$')
			rx_start(rx);
		else if (byte == '+')
			return GDB_RX_ACK;
		else if (byte == '-')
			return GDB_RX_NACK;
		else if (byte == GDB_INTERRUPT)
			return GDB_RX_INTERRUPT;
		return GDB_RX_NONE; /* noise between packets is ignored, as gdbserver does */
	case GDB_RX_BODY:
		if (byte == '$') { /* a resent packet after a broken one: start over */
			rx_start(rx);
			return GDB_RX_NONE;
		}
		if (byte == '#') {
			rx->state = GDB_RX_CSUM_HI;
			return GDB_RX_NONE;
		}
		rx->sum = (uint8_t)(rx->sum + byte);
		if (rx->len < GDB_PACKET_MAX)
			rx->buf[rx->len++] = (char)byte;
		else
			rx->bad = 1; /* keep reading to the '#': the framing stays in step */
		return GDB_RX_NONE;
	case GDB_RX_CSUM_HI:
	case GDB_RX_CSUM_LO:
		d = gdb_hex_digit((char)byte);
		if (d < 0)
			rx->bad = 1;
		else
			rx->csum = (uint8_t)(rx->csum << 4 | d);
		if (rx->state == GDB_RX_CSUM_HI) {
			rx->state = GDB_RX_CSUM_LO;
			return GDB_RX_NONE;
		}
		rx->state = GDB_RX_IDLE;
		rx->buf[rx->len] = '\0';
		if (rx->bad || rx->csum != rx->sum)
			return GDB_RX_BAD;
		return GDB_RX_PACKET;
	}
	return GDB_RX_NONE;
}

static int needs_escape(uint8_t c)
{
	return c == '#' || c == '$' || c == GDB_ESCAPE || c == '*';
}

ssize_t gdb_frame(const void *payload, size_t len, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *in = payload;
	size_t o = 0;
	uint8_t sum = 0;
	if (outlen < 4)
		return -ENOSPC;
	out[o++] = '$';
	for (size_t i = 0; i < len; i++) {
		uint8_t c = in[i];
		size_t need = needs_escape(c) ? 2 : 1;
		if (outlen - o < need + 3) /* room for this byte, '#' and two digits */
			return -ENOSPC;
		if (need == 2) {
			out[o++] = GDB_ESCAPE;
			sum = (uint8_t)(sum + GDB_ESCAPE);
			c ^= GDB_ESCAPE_XOR;
		}
		out[o++] = (char)c;
		sum = (uint8_t)(sum + c);
	}
	out[o++] = '#';
	out[o++] = hex[sum >> 4];
	out[o++] = hex[sum & 0xf];
	return (ssize_t)o;
}

ssize_t gdb_unescape(const char *in, size_t len, uint8_t *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = (uint8_t)in[i];
		if (c == GDB_ESCAPE) {
			if (++i == len)
				return -EINVAL;
			c = (uint8_t)in[i] ^ GDB_ESCAPE_XOR;
		}
		if (o == outlen)
			return -ENOSPC;
		out[o++] = c;
	}
	return (ssize_t)o;
}

ssize_t gdb_hex_decode(const char *hex, size_t hexlen, uint8_t *out, size_t outlen)
{
	if (hexlen % 2)
		return -EINVAL;
	if (hexlen / 2 > outlen)
		return -ENOSPC;
	for (size_t i = 0; i < hexlen / 2; i++) {
		int hi = gdb_hex_digit(hex[2 * i]), lo = gdb_hex_digit(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (ssize_t)(hexlen / 2);
}

void gdb_hex_encode(const void *in, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *b = in;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 0xf];
	}
	out[2 * len] = '\0';
}

int gdb_parse_hex(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	unsigned int n = 0;
	int d;
	while ((d = gdb_hex_digit(s[n])) >= 0) {
		if (++n > 16)
			return -EINVAL;
		x = x << 4 | (uint64_t)d;
	}
	if (n == 0)
		return -EINVAL;
	*v = x;
	*p = s + n;
	return 0;
}
