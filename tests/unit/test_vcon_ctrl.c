/* test_vcon_ctrl.c: virtio-console's control protocol state machine, message by message. */
#include <endian.h>
#include <string.h>

#include "devices/console/vcon_ctrl.h"
#include "tests/unit/tap.h"

static const char *const names[] = { "ringvm.stdin", "ringvm.stdout", "ringvm.stderr" };

/* What the guest sends: {id, event, value}, little-endian. */
static void guest(struct vcon_ctrl *c, uint32_t id, uint16_t event, uint16_t value,
		  struct vcon_ctrl_effect *e)
{
	struct virtio_console_control m = { htole32(id), htole16(event), htole16(value) };

	vcon_ctrl_from_guest(c, &m, sizeof(m), e);
}

/* The next message for the guest: its id, event, value and name (if any); false when none. */
static bool next(struct vcon_ctrl *c, uint32_t *id, uint16_t *event, uint16_t *value, char *name)
{
	uint8_t buf[VCON_CTRL_MSG_SIZE + VCON_NAME_MAX];
	struct virtio_console_control m;
	size_t n = vcon_ctrl_next(c, buf, sizeof(buf));

	if (n == 0)
		return false;
	memcpy(&m, buf, sizeof(m));
	*id = le32toh(m.id);
	*event = le16toh(m.event);
	*value = le16toh(m.value);
	memcpy(name, buf + sizeof(m), n - sizeof(m));
	name[n - sizeof(m)] = '\0';
	return true;
}

static void test_bring_up(void)
{
	struct vcon_ctrl c;
	struct vcon_ctrl_effect e;
	uint32_t id;
	uint16_t ev, val;
	char name[VCON_NAME_MAX + 1];

	vcon_ctrl_init(&c, names, 3);
	TAP_CHECK(!next(&c, &id, &ev, &val, name), "nothing is sent before the driver is ready");

	guest(&c, VIRTIO_CONSOLE_BAD_ID, VIRTIO_CONSOLE_DEVICE_READY, 1, &e);
	TAP_CHECK(e.send && !e.bad, "DEVICE_READY(1) makes messages pending");
	bool adds = true;
	for (uint32_t i = 0; i < 3; i++)
		adds &= next(&c, &id, &ev, &val, name) && id == i && ev == VIRTIO_CONSOLE_PORT_ADD;
	TAP_CHECK(adds, "then PORT_ADD for ports 0, 1, 2 in order");
	TAP_CHECK(!next(&c, &id, &ev, &val, name), "and nothing else until a port is ready");

	guest(&c, 1, VIRTIO_CONSOLE_PORT_READY, 1, &e);
	TAP_CHECK(e.send && e.port == 1, "PORT_READY(1, 1) makes port 1's messages pending");
	TAP_CHECK(next(&c, &id, &ev, &val, name) && id == 1 && ev == VIRTIO_CONSOLE_PORT_OPEN &&
			  val == 1,
		  "the host side's PORT_OPEN(1) goes first");
	TAP_CHECK(next(&c, &id, &ev, &val, name) && id == 1 && ev == VIRTIO_CONSOLE_PORT_NAME &&
			  strcmp(name, "ringvm.stdout") == 0,
		  "then PORT_NAME with the name's bytes after the header, no NUL");
	TAP_CHECK(!next(&c, &id, &ev, &val, name), "then nothing");

	guest(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 1, &e);
	TAP_CHECK(e.opened && !e.closed && c.port[1].guest_open, "the guest's PORT_OPEN(1) opens");
	guest(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 1, &e);
	TAP_CHECK(!e.opened, "a second PORT_OPEN(1) is not a new opening");
	guest(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 0, &e);
	TAP_CHECK(e.closed && c.port[1].guest_closed && !c.port[1].guest_open,
		  "PORT_OPEN(0) closes, and the port is marked closed by the guest");

	TAP_CHECK(vcon_ctrl_host_close(&c, 1), "the host side going away makes a message pending");
	TAP_CHECK(next(&c, &id, &ev, &val, name) && id == 1 && ev == VIRTIO_CONSOLE_PORT_OPEN &&
			  val == 0,
		  "PORT_OPEN(1, 0) tells the guest");
	TAP_CHECK(!vcon_ctrl_host_close(&c, 1), "a second close sends nothing");

	/* A port not ready yet: its host side closes first; PORT_OPEN(0) goes after PORT_READY. */
	TAP_CHECK(!vcon_ctrl_host_close(&c, 2), "closing before PORT_READY sends nothing yet");
	guest(&c, 2, VIRTIO_CONSOLE_PORT_READY, 1, &e);
	TAP_CHECK(next(&c, &id, &ev, &val, name) && id == 2 && ev == VIRTIO_CONSOLE_PORT_OPEN &&
			  val == 0,
		  "PORT_READY then gets PORT_OPEN(0): the guest never sees the port open");
}

static void test_hostile(void)
{
	struct vcon_ctrl c;
	struct vcon_ctrl_effect e;
	uint32_t id;
	uint16_t ev, val;
	char name[VCON_NAME_MAX + 1];
	uint8_t shortmsg[7] = { 0 };

	vcon_ctrl_init(&c, names, 3);
	vcon_ctrl_from_guest(&c, shortmsg, sizeof(shortmsg), &e);
	TAP_CHECK(e.bad && e.port == -1, "a message shorter than the header is refused");
	guest(&c, 3, VIRTIO_CONSOLE_PORT_READY, 1, &e);
	TAP_CHECK(e.bad && !e.send, "a port id past the last port is refused");
	guest(&c, UINT32_MAX, VIRTIO_CONSOLE_PORT_OPEN, 1, &e);
	TAP_CHECK(e.bad && !e.opened, "id 0xffffffff is refused");
	guest(&c, 0, VIRTIO_CONSOLE_PORT_OPEN, 1, &e);
	TAP_CHECK(e.bad && !c.port[0].guest_open, "PORT_OPEN before PORT_READY is refused");
	guest(&c, 0, VIRTIO_CONSOLE_PORT_NAME, 1, &e);
	TAP_CHECK(e.bad, "an event only the device sends is refused");
	guest(&c, 0, 999, 1, &e);
	TAP_CHECK(e.bad, "an unknown event is refused");
	guest(&c, 0, VIRTIO_CONSOLE_DEVICE_READY, 0, &e);
	TAP_CHECK(e.bad && !e.send, "DEVICE_READY(0) (driver failure) is reported, nothing sent");
	guest(&c, 0, VIRTIO_CONSOLE_PORT_READY, 0, &e);
	TAP_CHECK(e.bad && !c.port[0].ready, "PORT_READY(0) (the guest failed to add it) is reported");

	/* A guest repeating PORT_READY gets the same two messages, not a growing queue. */
	for (int i = 0; i < 1000; i++)
		guest(&c, 0, VIRTIO_CONSOLE_PORT_READY, 1, &e);
	unsigned int n = 0;
	while (next(&c, &id, &ev, &val, name))
		n++;
	TAP_CHECK(n == 2, "1000 PORT_READY leave 2 messages pending");

	/* A buffer too small for the name gets the name cut, never an overflow. */
	guest(&c, 0, VIRTIO_CONSOLE_PORT_READY, 1, &e);
	uint8_t buf[VCON_CTRL_MSG_SIZE + 4];
	memset(buf, 0xee, sizeof(buf));
	size_t len = vcon_ctrl_next(&c, buf, sizeof(buf)); /* PORT_OPEN */
	len = vcon_ctrl_next(&c, buf, VCON_CTRL_MSG_SIZE + 3);
	TAP_CHECK(len == VCON_CTRL_MSG_SIZE + 3 && memcmp(buf + VCON_CTRL_MSG_SIZE, "rin", 3) == 0 &&
			  buf[VCON_CTRL_MSG_SIZE + 3] == 0xee,
		  "a name that does not fit is cut to the buffer");
	TAP_CHECK(vcon_ctrl_next(&c, buf, VCON_CTRL_MSG_SIZE - 1) == 0,
		  "a buffer smaller than a header gets nothing");

	/* Reset forgets the guest's state, not the host's. */
	vcon_ctrl_host_close(&c, 1);
	vcon_ctrl_reset(&c);
	TAP_CHECK(!c.port[0].ready && !c.port[0].pending && !c.port[1].host_open,
		  "reset forgets ready/pending, keeps a closed host side closed");
}

int main(void)
{
	test_bring_up();
	test_hostile();
	return tap_done();
}
