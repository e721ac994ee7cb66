/* test_gdb_packet.c: the gdb protocol framing takes good packets, and refuses every malformed one. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/tap.h"
#include "vmm/gdb_packet.h"

/* Feed a whole string; return the last event that was not GDB_RX_NONE (GDB_RX_NONE if none). */
static enum gdb_rx_event feed(struct gdb_rx *rx, const char *s, size_t len, int *events)
{
	enum gdb_rx_event last = GDB_RX_NONE;
	*events = 0;
	for (size_t i = 0; i < len; i++) {
		enum gdb_rx_event e = gdb_rx_feed(rx, (uint8_t)s[i]);
		if (e != GDB_RX_NONE) {
			last = e;
			(*events)++;
		}
	}
	return last;
}

static enum gdb_rx_event feed_str(struct gdb_rx *rx, const char *s, int *events)
{
	return feed(rx, s, strlen(s), events);
}

int main(void)
{
	static struct gdb_rx rx;
	int ev;
	gdb_rx_init(&rx);

	/* Good packets. "g" sums to 0x67. */
	TAP_CHECK(feed_str(&rx, "$g#67", &ev) == GDB_RX_PACKET && ev == 1 && rx.len == 1 &&
			  strcmp(rx.buf, "g") == 0,
		  "a good packet is delivered once with its payload");
	TAP_CHECK(feed_str(&rx, "$?#3F", &ev) == GDB_RX_PACKET && strcmp(rx.buf, "?") == 0,
		  "upper-case checksum digits are accepted");
	TAP_CHECK(feed_str(&rx, "$#00", &ev) == GDB_RX_PACKET && rx.len == 0, "an empty packet");
	TAP_CHECK(feed_str(&rx, "noise\r\n+", &ev) == GDB_RX_ACK && ev == 1,
		  "noise between packets is ignored, '+' is an ack");
	TAP_CHECK(feed_str(&rx, "-", &ev) == GDB_RX_NACK, "'-' asks for a resend");
	TAP_CHECK(feed_str(&rx, "\x03", &ev) == GDB_RX_INTERRUPT, "0x03 between packets is Ctrl-C");
	TAP_CHECK(feed_str(&rx, "$m\x03#70", &ev) == GDB_RX_PACKET && rx.len == 2 && rx.buf[1] == 3,
		  "0x03 inside a packet is data, not Ctrl-C");
	TAP_CHECK(feed_str(&rx, "$mbroken$g#67", &ev) == GDB_RX_PACKET && strcmp(rx.buf, "g") == 0,
		  "a '$' inside a packet starts over with the resent packet");

	/* Malformed packets: each is GDB_RX_BAD and the receiver is ready for the next one. */
	TAP_CHECK(feed_str(&rx, "$g#68", &ev) == GDB_RX_BAD, "a wrong checksum is refused");
	TAP_CHECK(feed_str(&rx, "$g#6z", &ev) == GDB_RX_BAD, "a non-hex checksum digit is refused");
	TAP_CHECK(feed_str(&rx, "$g#zz", &ev) == GDB_RX_BAD, "two non-hex digits are refused");
	TAP_CHECK(feed_str(&rx, "$?#3F", &ev) == GDB_RX_PACKET, "the receiver recovers after bad packets");

	/* A payload one byte longer than the limit: refused, nothing stored past the buffer. */
	size_t big = GDB_PACKET_MAX + 1;
	char *s = malloc(big + 5);
	s[0] = '$';
	memset(s + 1, 'a', big);
	unsigned int sum = 0;
	for (size_t i = 0; i < big; i++)
		sum += 'a';
	snprintf(s + 1 + big, 4, "#%02x", sum & 0xff);
	TAP_CHECK(feed(&rx, s, big + 4, &ev) == GDB_RX_BAD && ev == 1 && rx.len == GDB_PACKET_MAX,
		  "an overlong packet is refused at its end, the buffer never overflows");
	/* Exactly the limit is fine. */
	sum -= 'a';
	s[GDB_PACKET_MAX + 1] = '#';
	snprintf(s + 1 + GDB_PACKET_MAX, 4, "#%02x", sum & 0xff);
	TAP_CHECK(feed(&rx, s, GDB_PACKET_MAX + 4, &ev) == GDB_RX_PACKET && rx.len == GDB_PACKET_MAX &&
			  rx.buf[GDB_PACKET_MAX] == '\0',
		  "a packet of exactly GDB_PACKET_MAX bytes is accepted");
	free(s);
	TAP_CHECK(feed_str(&rx, "$g#67", &ev) == GDB_RX_PACKET, "and the receiver goes on");

	/* Framing: escapes, checksum, and what does not fit. */
	char out[64];
	ssize_t n = gdb_frame("OK", 2, out, sizeof(out));
	TAP_CHECK(n == 6 && memcmp(out, "$OK#9a", 6) == 0, "frame OK");
	n = gdb_frame("a#b$c}d*e", 9, out, sizeof(out));
	TAP_CHECK(n > 0 && memcmp(out, "$a}\x03" "b}\x04" "c}]d}\x0a" "e#", 15) == 0,
		  "'#', '$', '}' and '*' are escaped");
	/* The frame goes back through the receiver and unescapes to the original. */
	TAP_CHECK(feed(&rx, out, (size_t)n, &ev) == GDB_RX_PACKET, "an escaped frame checks out");
	uint8_t raw[16];
	ssize_t m = gdb_unescape(rx.buf, rx.len, raw, sizeof(raw));
	TAP_CHECK(m == 9 && memcmp(raw, "a#b$c}d*e", 9) == 0, "unescape gives the bytes back");
	TAP_CHECK(gdb_frame("hello", 5, out, 8) == -ENOSPC, "a frame that does not fit is refused");
	TAP_CHECK(gdb_frame("hello", 5, out, 9) == 9, "a frame that just fits");
	TAP_CHECK(gdb_frame("", 0, out, 3) == -ENOSPC, "no room even for an empty frame");
	TAP_CHECK(gdb_unescape("ab}", 3, raw, sizeof(raw)) == -EINVAL, "a trailing escape is refused");
	TAP_CHECK(gdb_unescape("abc", 3, raw, 2) == -ENOSPC, "unescape stops at the end of out");

	/* Hex. */
	uint8_t b[4];
	TAP_CHECK(gdb_hex_decode("00fFa5", 6, b, sizeof(b)) == 3 && b[0] == 0 && b[1] == 0xff && b[2] == 0xa5,
		  "hex decode");
	TAP_CHECK(gdb_hex_decode("abc", 3, b, sizeof(b)) == -EINVAL, "an odd number of digits is refused");
	TAP_CHECK(gdb_hex_decode("0g", 2, b, sizeof(b)) == -EINVAL, "a non-hex digit is refused");
	TAP_CHECK(gdb_hex_decode("0011223344", 10, b, sizeof(b)) == -ENOSPC, "too many bytes are refused");
	char hex[9];
	gdb_hex_encode("\x01\xab\xff\x00", 4, hex);
	TAP_CHECK(strcmp(hex, "01abff00") == 0, "hex encode");

	const char *p = "ffffffff81000000,10";
	uint64_t v = 0;
	TAP_CHECK(gdb_parse_hex(&p, &v) == 0 && v == 0xffffffff81000000ULL && *p == ',', "parse an address");
	p = "11111111111111111";
	TAP_CHECK(gdb_parse_hex(&p, &v) == -EINVAL && *p == '1', "17 digits overflow and are refused");
	p = ",10";
	TAP_CHECK(gdb_parse_hex(&p, &v) == -EINVAL && *p == ',', "no digit is refused");
	return tap_done();
}
