/* vcon_ctrl.c: virtio-console's control messages: what the guest said, what to tell it next. */
#include "devices/console/vcon_ctrl.h"

#include <endian.h>
#include <string.h>

void vcon_ctrl_init(struct vcon_ctrl *c, const char *const *names, unsigned int n)
{
	memset(c, 0, sizeof(*c));
	c->nr_ports = n < VCON_MAX_PORTS ? n : VCON_MAX_PORTS;
	for (unsigned int i = 0; i < c->nr_ports; i++) {
		struct vcon_ctrl_port *p = &c->port[i];

		strncpy(p->name, names[i] ? names[i] : "", VCON_NAME_MAX - 1);
		p->host_open = true;
	}
}

void vcon_ctrl_reset(struct vcon_ctrl *c)
{
	for (unsigned int i = 0; i < c->nr_ports; i++) {
		struct vcon_ctrl_port *p = &c->port[i];

		p->ready = false;
		p->guest_open = false;
		p->guest_closed = false;
		p->pending = 0;
	}
}

void vcon_ctrl_from_guest(struct vcon_ctrl *c, const void *msg, size_t len,
			  struct vcon_ctrl_effect *e)
{
	struct virtio_console_control m;

	memset(e, 0, sizeof(*e));
	e->port = -1;
	if (len < sizeof(m)) {
		e->bad = "a control message shorter than its 8-byte header";
		return;
	}
	memcpy(&m, msg, sizeof(m)); /* read once: the guest may change it under us */
	uint32_t id = le32toh(m.id);
	uint16_t event = le16toh(m.event), value = le16toh(m.value);

	if (event == VIRTIO_CONSOLE_DEVICE_READY) {
		/* 5.3.6.2: the driver is ready for PORT_ADD; value 0 means it failed to initialise. */
		if (!value) {
			e->bad = "the driver reported that it failed to initialise (DEVICE_READY 0)";
			return;
		}
		vcon_ctrl_reset(c);
		for (unsigned int i = 0; i < c->nr_ports; i++)
			c->port[i].pending = VCON_SEND_ADD;
		e->send = c->nr_ports > 0;
		return;
	}
	if (id >= c->nr_ports) {
		e->bad = "a control message for a port that does not exist";
		return;
	}
	struct vcon_ctrl_port *p = &c->port[id];
	e->port = (int)id;
	switch (event) {
	case VIRTIO_CONSOLE_PORT_READY:
		if (!value) {
			e->bad = "the driver could not add a port (PORT_READY 0)";
			return;
		}
		/* A repeated PORT_READY (the driver answers a duplicate PORT_ADD so) sends both again. */
		p->ready = true;
		p->pending |= VCON_SEND_OPEN | VCON_SEND_NAME;
		e->send = true;
		return;
	case VIRTIO_CONSOLE_PORT_OPEN:
		if (!p->ready) {
			e->bad = "PORT_OPEN for a port the driver never reported ready";
			return;
		}
		if (value && !p->guest_open) {
			e->opened = true;
			p->guest_closed = false;
		}
		if (!value && p->guest_open) {
			e->closed = true;
			p->guest_closed = true;
		}
		p->guest_open = value != 0;
		return;
	default:
		e->bad = "a control event a driver does not send";
		return;
	}
}

/* Header of a message for port id, little-endian (1.x: VERSION_1 devices are little-endian). */
static void vcon_ctrl_put(uint8_t *buf, uint32_t id, uint16_t event, uint16_t value)
{
	struct virtio_console_control m = {
		.id = htole32(id),
		.event = htole16(event),
		.value = htole16(value),
	};
	memcpy(buf, &m, sizeof(m));
}

size_t vcon_ctrl_next(struct vcon_ctrl *c, uint8_t *buf, size_t cap)
{
	if (cap < VCON_CTRL_MSG_SIZE)
		return 0;
	for (unsigned int i = 0; i < c->nr_ports; i++) {
		struct vcon_ctrl_port *p = &c->port[i];

		if (p->pending & VCON_SEND_ADD) {
			p->pending &= ~VCON_SEND_ADD;
			vcon_ctrl_put(buf, i, VIRTIO_CONSOLE_PORT_ADD, 1);
			return VCON_CTRL_MSG_SIZE;
		}
		if (!p->ready)
			continue;
		if (p->pending & VCON_SEND_OPEN) {
			p->pending &= ~VCON_SEND_OPEN;
			vcon_ctrl_put(buf, i, VIRTIO_CONSOLE_PORT_OPEN, p->host_open);
			return VCON_CTRL_MSG_SIZE;
		}
		if (p->pending & VCON_SEND_NAME) {
			size_t n = strlen(p->name);

			p->pending &= ~VCON_SEND_NAME;
			if (n > cap - VCON_CTRL_MSG_SIZE)
				n = cap - VCON_CTRL_MSG_SIZE;
			vcon_ctrl_put(buf, i, VIRTIO_CONSOLE_PORT_NAME, 1);
			memcpy(buf + VCON_CTRL_MSG_SIZE, p->name, n);
			return VCON_CTRL_MSG_SIZE + n;
		}
	}
	return 0;
}

bool vcon_ctrl_host_close(struct vcon_ctrl *c, unsigned int i)
{
	if (i >= c->nr_ports || !c->port[i].host_open)
		return false;
	c->port[i].host_open = false;
	if (!c->port[i].ready)
		return false; /* PORT_OPEN(0) goes out after the guest's PORT_READY */
	c->port[i].pending |= VCON_SEND_OPEN;
	return true;
}
