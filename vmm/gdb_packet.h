/* gdb_packet.h: the gdb remote serial protocol's framing ($payload#checksum, acks, Ctrl-C) and its hex. */
#ifndef RINGVM_GDB_PACKET_H
#define RINGVM_GDB_PACKET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The wire (GDB manual, "Remote Protocol", "Overview"):
 *
 *     $ payload # c c        a packet; cc = two hex digits, the sum of the payload bytes mod 256
 *     +  /  -                acknowledge / ask to resend the last packet (until QStartNoAckMode)
 *     0x03                   outside a packet: the user pressed Ctrl-C
 *
 * Binary data inside a payload (X packets, and anything the stub sends) escapes '#', '$', '}' and
 * '*' as '}' followed by the byte XOR 0x20. Everything a debugger client sends is input like any
 * other: a payload longer than GDB_PACKET_MAX, a checksum that does not match or is not hex is
 * reported as GDB_RX_BAD (answer '-'), never stored past the buffer.
 */

/* The largest payload accepted or sent; advertised as PacketSize in qSupported. */
#define GDB_PACKET_MAX 16384

enum gdb_rx_event {
	GDB_RX_NONE,      /* the byte was consumed; nothing complete yet */
	GDB_RX_PACKET,    /* a packet with a good checksum: rx->buf[0..rx->len), NUL-terminated */
	GDB_RX_BAD,       /* a packet that was too long, or whose checksum was wrong or not hex */
	GDB_RX_ACK,       /* '+' outside a packet */
	GDB_RX_NACK,      /* '-' outside a packet */
	GDB_RX_INTERRUPT, /* 0x03 outside a packet */
};

enum gdb_rx_state {
	GDB_RX_IDLE,    /* between packets: '$', '+', '-', 0x03 mean something, the rest is noise */
	GDB_RX_BODY,    /* after '$', until '#' */
	GDB_RX_CSUM_HI, /* the first checksum digit */
	GDB_RX_CSUM_LO, /* the second */
};

struct gdb_rx {
	enum gdb_rx_state state;
	size_t len;     /* payload bytes kept in buf */
	uint8_t sum;    /* running checksum of the payload */
	uint8_t csum;   /* checksum digits read so far */
	int bad;        /* the packet overflowed or had a non-hex digit: report GDB_RX_BAD at its end */
	char buf[GDB_PACKET_MAX + 1];
};

/* A receiver between packets. */
void gdb_rx_init(struct gdb_rx *rx);

/*
 * Feed one byte from the client. A '$' inside a packet starts a new packet (the old one was
 * broken: the client resent). Returns what the byte completed; after GDB_RX_PACKET the payload
 * stays valid until the next call.
 */
enum gdb_rx_event gdb_rx_feed(struct gdb_rx *rx, uint8_t byte);

/*
 * Frame payload[0..len) as "$...#cc" into out[0..outlen), escaping '#', '$', '}' and '*'.
 * Returns the frame's length, or -ENOSPC when it does not fit (out is then undefined).
 */
__attribute__((warn_unused_result)) ssize_t gdb_frame(const void *payload, size_t len, char *out,
						      size_t outlen);

/* Undo the '}' escape of binary data: -EINVAL for a trailing '}', -ENOSPC when out is too small;
   else the number of bytes written. */
__attribute__((warn_unused_result)) ssize_t gdb_unescape(const char *in, size_t len, uint8_t *out,
							 size_t outlen);

/* Hex digit value, or -1. */
int gdb_hex_digit(char c);

/* Decode hexlen hex digits into bytes: -EINVAL for an odd count or a non-hex digit, -ENOSPC when
   out is too small; else the number of bytes. */
__attribute__((warn_unused_result)) ssize_t gdb_hex_decode(const char *hex, size_t hexlen, uint8_t *out,
							   size_t outlen);

/* Encode len bytes as 2*len lowercase hex digits followed by a NUL: out holds 2*len+1 bytes. */
void gdb_hex_encode(const void *in, size_t len, char *out);

/*
 * Parse 1-16 hex digits at *p into *v and advance *p past them. -EINVAL (and *p unchanged) when
 * there is no digit or more than 16.
 */
__attribute__((warn_unused_result)) int gdb_parse_hex(const char **p, uint64_t *v);

#endif
