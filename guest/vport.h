/* vport.h: find the virtio-console ports the VMM named (guest/protocol.h) and open them. */
#ifndef RINGVM_GUEST_VPORT_H
#define RINGVM_GUEST_VPORT_H

/*
 * Linux's virtio_console makes /dev/vportNpM for each port the device adds, and the port's name
 * (PORT_NAME) appears as /sys/class/virtio-ports/vportNpM/name a moment later, after the module
 * loaded and the control messages went round; the kernel then sends a uevent (KOBJ_CHANGE). Wait
 * for each of names[0 .. n) to appear (timeout_ms at most) and open DEV_DIR/vportNpM with flags[i]
 * (plus O_CLOEXEC) into fds[i]. The directory is looked at again whenever wake_fd (a
 * NETLINK_KOBJECT_UEVENT socket in PID 1) becomes readable, whose pending data is then drained, and
 * at least once a second; with wake_fd -1, every few milliseconds. Waking on events rather than on
 * short sleeps matters in the KVM lab, whose nested timers sometimes fire tens of seconds late.
 * sys_dir and dev_dir are parameters so that tests can use a fake tree. Returns 0, -ETIMEDOUT (some
 * name never appeared; nothing is left open) or -errno of an open.
 */
__attribute__((warn_unused_result)) int vport_open_by_name(const char *sys_dir, const char *dev_dir,
							   const char *const *names, const int *flags,
							   int *fds, unsigned int n,
							   unsigned int timeout_ms, int wake_fd);

#endif
