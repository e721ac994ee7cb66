/* uart8250.c: 16550A register model: enough for Linux's 8250 driver, console output and input. */
#include "uart8250.h"

#include <linux/serial_reg.h>
#include <string.h>

static uint8_t uart_iir(const struct uart8250 *u)
{
	/* Priorities (16550A data sheet): receive data, then transmitter empty. */
	if ((u->ier & UART_IER_RDI) && u->rx_len)
		return UART_IIR_RDI;
	if ((u->ier & UART_IER_THRI) && u->thri_pending)
		return UART_IIR_THRI;
	return UART_IIR_NO_INT;
}

static void uart_update_irq(struct uart8250 *u)
{
	int level = uart_iir(u) != UART_IIR_NO_INT;
	/* With MCR OUT2 clear a PC UART keeps its interrupt off the bus. */
	if (!(u->mcr & UART_MCR_OUT2))
		level = 0;
	if (level != u->irq_level) {
		u->irq_level = level;
		u->host.irq(u->host.opaque, level);
	}
}

static uint8_t uart_read_reg(struct uart8250 *u, uint64_t reg)
{
	int dlab = u->lcr & UART_LCR_DLAB;
	uint8_t v = 0;
	switch (reg) {
	case UART_RX:
		if (dlab)
			return u->dll;
		if (u->rx_len) {
			v = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % UART_RX_FIFO;
			u->rx_len--;
			pthread_cond_signal(&u->rx_space);
		}
		return v;
	case UART_IER:
		return dlab ? u->dlm : u->ier;
	case UART_IIR:
		v = uart_iir(u);
		/* Reading IIR while it reports THRI acknowledges that interrupt. */
		if (v == UART_IIR_THRI)
			u->thri_pending = 0;
		return v | ((u->fcr & UART_FCR_ENABLE_FIFO) ? 0xc0 : 0);
	case UART_LCR:
		return u->lcr;
	case UART_MCR:
		return u->mcr;
	case UART_LSR:
		/* Bytes leave at once: the transmitter is always empty. */
		return UART_LSR_TEMT | UART_LSR_THRE | (u->rx_len ? UART_LSR_DR : 0);
	case UART_MSR:
		if (u->mcr & UART_MCR_LOOP)
			return (uint8_t)(((u->mcr & 0x0c) << 4) | ((u->mcr & 0x03) << 4));
		return UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
	case UART_SCR:
		return u->scr;
	default:
		return 0;
	}
}

static void uart_write_reg(struct uart8250 *u, uint64_t reg, uint8_t v)
{
	int dlab = u->lcr & UART_LCR_DLAB;
	switch (reg) {
	case UART_TX:
		if (dlab) {
			u->dll = v;
			return;
		}
		if (u->mcr & UART_MCR_LOOP) {
			if (u->rx_len < UART_RX_FIFO) {
				u->rx[(u->rx_head + u->rx_len) % UART_RX_FIFO] = v;
				u->rx_len++;
			}
		} else {
			u->host.tx(u->host.opaque, &v, 1);
		}
		u->thri_pending = 1;
		break;
	case UART_IER:
		if (dlab) {
			u->dlm = v;
			return;
		}
		/* Enabling THRI with an empty transmitter interrupts at once, as real parts do. */
		if (!(u->ier & UART_IER_THRI) && (v & UART_IER_THRI))
			u->thri_pending = 1;
		u->ier = v & 0x0f;
		break;
	case UART_FCR:
		u->fcr = v & (UART_FCR_ENABLE_FIFO | 0xc0);
		if (v & UART_FCR_CLEAR_RCVR) {
			u->rx_len = 0;
			pthread_cond_signal(&u->rx_space);
		}
		break;
	case UART_LCR:
		u->lcr = v;
		return;
	case UART_MCR:
		u->mcr = v & 0x1f;
		break;
	case UART_SCR:
		u->scr = v;
		return;
	default:
		return;
	}
	uart_update_irq(u);
}

static void uart_bus_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct uart8250 *u = opaque;
	pthread_mutex_lock(&u->lock);
	uint8_t v = uart_read_reg(u, offset);
	uart_update_irq(u);
	pthread_mutex_unlock(&u->lock);
	memset(data, 0, len);
	memcpy(data, &v, 1);
}

static void uart_bus_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct uart8250 *u = opaque;
	uint8_t v;
	memcpy(&v, data, 1);
	pthread_mutex_lock(&u->lock);
	uart_write_reg(u, offset, v);
	pthread_mutex_unlock(&u->lock);
}

const struct bus_ops uart8250_ops = {
	.read = uart_bus_read,
	.write = uart_bus_write,
};

void uart_init(struct uart8250 *u, const struct uart_host *host)
{
	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->rx_space, NULL);
	u->host = *host;
	u->lcr = UART_LCR_WLEN8;
	u->mcr = UART_MCR_OUT2;
}

void uart_destroy(struct uart8250 *u)
{
	pthread_cond_destroy(&u->rx_space);
	pthread_mutex_destroy(&u->lock);
}

size_t uart_receive(struct uart8250 *u, const uint8_t *buf, size_t len)
{
	size_t done = 0;
	pthread_mutex_lock(&u->lock);
	while (done < len && !u->closed) {
		if (u->rx_len == UART_RX_FIFO) {
			pthread_cond_wait(&u->rx_space, &u->lock);
			continue;
		}
		u->rx[(u->rx_head + u->rx_len) % UART_RX_FIFO] = buf[done++];
		u->rx_len++;
		uart_update_irq(u);
	}
	pthread_mutex_unlock(&u->lock);
	return done;
}

void uart_close(struct uart8250 *u)
{
	pthread_mutex_lock(&u->lock);
	u->closed = 1;
	pthread_cond_broadcast(&u->rx_space);
	pthread_mutex_unlock(&u->lock);
}
