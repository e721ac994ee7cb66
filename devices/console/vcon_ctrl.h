/* vcon_ctrl.h: virtio-console's control protocol (multiport): port state and messages, no I/O. */
#ifndef RINGVM_VCON_CTRL_H
#define RINGVM_VCON_CTRL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_console.h>

/*
 * With VIRTIO_CONSOLE_F_MULTIPORT (virtio 1.x 5.3.6.2) the device and the driver talk about ports
 * over two queues of struct virtio_console_control {le32 id; le16 event; le16 value}, a PORT_NAME
 * followed by the name's bytes. What Linux's virtio_console does with them decides the order:
 *
 *   guest                                   device (this file decides what to send next)
 *   DEVICE_READY(1)                ---->    every port: PORT_ADD pending
 *                                  <----    PORT_ADD(id)           (the guest creates vportNpM,
 *   PORT_READY(id, 1)              ---->                            fills its receive queue)
 *                                  <----    PORT_OPEN(id, host_open), then PORT_NAME(id) "name"
 *   PORT_OPEN(id, 1) on open(2)    ---->    the guest reads and writes; host data may flow
 *   PORT_OPEN(id, 0) on close(2)   ---->
 *                                  <----    PORT_OPEN(id, 0) when the host side is gone
 *
 * PORT_OPEN goes before PORT_NAME on purpose: the guest finds a port by its name in sysfs, which
 * appears when PORT_NAME is handled; the guest handles control messages in order, so by then it
 * already knows the host side is open (a read on a port whose host side is closed returns 0 at
 * once: a reader that came too early would take that for EOF).
 *
 * Pending messages are bits per port, not a queue: what the guest can make us send is bounded (a
 * guest repeating PORT_READY sets the same bits again), and they go out in a fixed order: lowest
 * port first, ADD before OPEN before NAME. The caller (the device) serialises every call with
 * its own lock; the guest's messages are hostile and checked here.
 */

#define VCON_MAX_PORTS 8
#define VCON_NAME_MAX 64 /* bytes of a port name, NUL included */
#define VCON_CTRL_MSG_SIZE sizeof(struct virtio_console_control)

/* Pending message bits of a port. */
#define VCON_SEND_ADD (1u << 0)
#define VCON_SEND_OPEN (1u << 1)
#define VCON_SEND_NAME (1u << 2)

struct vcon_ctrl_port {
	char name[VCON_NAME_MAX];
	bool host_open;	   /* the host side can take or give data (what PORT_OPEN tells the guest) */
	bool ready;	   /* the guest added the port (PORT_READY 1) since the last DEVICE_READY */
	bool guest_open;   /* the guest's last PORT_OPEN */
	bool guest_closed; /* the guest closed the port after opening it */
	unsigned int pending;
};

struct vcon_ctrl {
	unsigned int nr_ports;
	struct vcon_ctrl_port port[VCON_MAX_PORTS];
};

/* What a message from the guest changed, for the device to act on. */
struct vcon_ctrl_effect {
	int port;	  /* the port concerned, or -1 */
	bool opened;	  /* the guest opened port `port` */
	bool closed;	  /* the guest closed port `port` */
	bool send;	  /* messages became pending: the control receive queue has work */
	const char *bad;  /* a malformed or out-of-range message: a static one-line reason */
};

/* Ports 0 .. n-1 with these names (cut to VCON_NAME_MAX - 1 bytes), host side open. n <= VCON_MAX_PORTS. */
void vcon_ctrl_init(struct vcon_ctrl *c, const char *const *names, unsigned int n);

/* The driver reset the device: forget what the guest did (ready, open, pending); names and host
   sides stay. */
void vcon_ctrl_reset(struct vcon_ctrl *c);

/*
 * One message from the guest's control transmit queue: msg[0 .. len). Updates the state and fills
 * *e. A message shorter than a control header, for a port that does not exist, or of an event the
 * guest does not send, changes nothing and sets e->bad.
 */
void vcon_ctrl_from_guest(struct vcon_ctrl *c, const void *msg, size_t len,
			  struct vcon_ctrl_effect *e);

/*
 * The next pending message for the guest, written to buf (cap bytes, at least VCON_CTRL_MSG_SIZE):
 * returns its length and clears its bit, or 0 when nothing is pending. A name that does not fit
 * is cut.
 */
size_t vcon_ctrl_next(struct vcon_ctrl *c, uint8_t *buf, size_t cap);

/* The host side of port i went away (EOF written, reader gone): PORT_OPEN(i, 0) becomes pending
   if the guest knows the port. Returns true when a message became pending. */
bool vcon_ctrl_host_close(struct vcon_ctrl *c, unsigned int i);

#endif
