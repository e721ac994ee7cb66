/* uart8250.h: a 16550A UART (COM1) for the guest console. */
#ifndef RINGVM_X86_UART8250_H
#define RINGVM_X86_UART8250_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/bus.h"

#define UART_RX_FIFO 64

/* Where transmitted bytes go, and how the interrupt line is driven. Called with the UART lock held. */
struct uart_host {
	void (*tx)(void *opaque, const uint8_t *buf, size_t len);
	void (*irq)(void *opaque, int level);
	void *opaque;
};

struct uart8250 {
	pthread_mutex_t lock; /* protects everything below: vCPU threads and the console input thread */
	pthread_cond_t rx_space; /* signalled when the guest drains the receive FIFO */
	struct uart_host host;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	uint8_t rx[UART_RX_FIFO];
	unsigned int rx_head, rx_len;
	int thri_pending; /* "transmitter empty" interrupt not yet acknowledged by an IIR read */
	int irq_level;
	int closed;       /* uart_close(): receivers stop waiting */
};

extern const struct bus_ops uart8250_ops; /* register over 8 ports with opaque = the uart */

void uart_init(struct uart8250 *u, const struct uart_host *host);
void uart_destroy(struct uart8250 *u);

/*
 * Queue bytes the host typed for the guest; blocks while the receive FIFO is full (the guest has not
 * read it yet) until uart_close(). Returns the number of bytes queued. Console input thread only.
 */
size_t uart_receive(struct uart8250 *u, const uint8_t *buf, size_t len);

/* Wake and refuse any blocked uart_receive(), for shutdown. */
void uart_close(struct uart8250 *u);

#endif
