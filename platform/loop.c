/* The event loop: level-triggered epoll, an eventfd for wake-ups from other threads, and
 * timers in a pairing heap whose nodes live in the caller's structs (O(1) arm, O(log n)
 * amortised pop and disarm, no allocation and no capacity to size up front). */
#include "loop.h"

#include "clock.h"
#include "signal.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define EVENTS 64

struct floe_loop {
	int ep, efd;
	int64_t (*clock_ms)(void *arg);
	void *clock_arg;
	void (*on_wake)(void *arg);
	void *wake_arg;
	char *buffer;
	size_t buffer_len;
	atomic_bool stop;
	bool signals; /* floe_loop_wake_on_signals */
	struct floe_timer *timers; /* the heap's root */
	size_t ntimers;
	/* ios kicked for the next round, and those being run this round */
	struct floe_io *kicked, *pending;
	struct floe_io wake_io;
	/* The current round's events: floe_loop_io_del clears the entries of an io that
	 * has not been called yet, so that a callback may free another connection. */
	struct epoll_event ev[EVENTS];
	int nev, cur;
};

static int64_t mono_ms(void *arg)
{
	return floe_clock_mono_ns() / 1000000;
}

int64_t floe_loop_now(const struct floe_loop *l)
{
	return l->clock_ms(l->clock_arg);
}

char *floe_loop_buffer(const struct floe_loop *l, size_t *len)
{
	if (len)
		*len = l->buffer_len;
	return l->buffer;
}

static void wake_cb(struct floe_io *io, unsigned events)
{
	struct floe_loop *l = io->arg;
	uint64_t v;
	/* Reading resets the counter; several wakes since the last round call once. */
	while (read(l->efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
	if (l->on_wake)
		l->on_wake(l->wake_arg);
}

int floe_loop_new(const struct floe_loop_opts *o, struct floe_loop **out)
{
	static const struct floe_loop_opts defaults;
	if (!o)
		o = &defaults;
	struct floe_loop *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	int rc;
	l->clock_ms = o->clock_ms ? o->clock_ms : mono_ms;
	l->clock_arg = o->clock_arg;
	l->on_wake = o->on_wake;
	l->wake_arg = o->wake_arg;
	l->buffer = o->buffer;
	l->buffer_len = o->buffer ? o->buffer_len : 0;
	atomic_init(&l->stop, false);
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->ep < 0 || l->efd < 0) {
		rc = -errno;
		goto err;
	}
	l->wake_io.cb = wake_cb;
	l->wake_io.arg = l;
	if ((rc = floe_loop_io_add(l, &l->wake_io, l->efd, FLOE_IO_READ)))
		goto err;
	*out = l;
	return 0;
err:
	floe_loop_free(l);
	return rc;
}

void floe_loop_free(struct floe_loop *l)
{
	if (!l)
		return;
	/* Before the close: a handler must not write to a descriptor reused since. */
	if (l->signals)
		floe_signal_wake_fd(-1);
	if (l->ep >= 0)
		close(l->ep);
	if (l->efd >= 0)
		close(l->efd);
	free(l);
}

void floe_loop_wake(struct floe_loop *l)
{
	uint64_t one = 1;
	/* EAGAIN means the counter is saturated: a wake is pending anyway. */
	while (write(l->efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void floe_loop_wake_on_signals(struct floe_loop *l)
{
	l->signals = true;
	floe_signal_wake_fd(l->efd);
}

void floe_loop_stop(struct floe_loop *l)
{
	atomic_store(&l->stop, true);
	floe_loop_wake(l);
}

void floe_loop_resume(struct floe_loop *l)
{
	atomic_store(&l->stop, false);
}

bool floe_loop_stopping(const struct floe_loop *l)
{
	return atomic_load(&((struct floe_loop *)l)->stop);
}

/* --- descriptors ------------------------------------------------------------------ */

/* A paused io (no events) is taken out of the epoll set altogether: epoll reports errors
 * and hang-ups whatever the mask says, which would call a paused reader every round. */
static int sync_epoll(struct floe_loop *l, struct floe_io *io, unsigned events, bool was_in)
{
	struct epoll_event ev = {0};
	ev.events = (events & FLOE_IO_READ ? EPOLLIN | EPOLLRDHUP : 0u) |
		    (events & FLOE_IO_WRITE ? EPOLLOUT : 0u);
	ev.data.ptr = io;
	int op = events ? (was_in ? EPOLL_CTL_MOD : EPOLL_CTL_ADD) : EPOLL_CTL_DEL;
	if (!events && !was_in)
		return 0;
	if (epoll_ctl(l->ep, op, io->fd, &ev))
		return -errno;
	return 0;
}

int floe_loop_io_add(struct floe_loop *l, struct floe_io *io, int fd, unsigned events)
{
	if (io->added || fd < 0)
		return -EINVAL;
	io->fd = fd;
	io->kicked = false;
	io->next_kicked = NULL;
	events &= FLOE_IO_READ | FLOE_IO_WRITE;
	int rc = sync_epoll(l, io, events, false);
	if (rc)
		return rc;
	io->events = events;
	io->added = true;
	return 0;
}

int floe_loop_io_set(struct floe_loop *l, struct floe_io *io, unsigned events)
{
	if (!io->added)
		return -EINVAL;
	events &= FLOE_IO_READ | FLOE_IO_WRITE;
	if (events == io->events)
		return 0;
	int rc = sync_epoll(l, io, events, io->events != 0);
	if (rc)
		return rc;
	io->events = events;
	return 0;
}

unsigned floe_loop_io_events(const struct floe_io *io)
{
	return io->added ? io->events : 0;
}

static void unlink_kicked(struct floe_io **list, struct floe_io *io)
{
	for (struct floe_io **p = list; *p; p = &(*p)->next_kicked) {
		if (*p == io) {
			*p = io->next_kicked;
			io->next_kicked = NULL;
			return;
		}
	}
}

void floe_loop_io_del(struct floe_loop *l, struct floe_io *io)
{
	if (!io->added)
		return;
	if (io->events)
		epoll_ctl(l->ep, EPOLL_CTL_DEL, io->fd, NULL);
	for (int i = l->cur + 1; i < l->nev; i++)
		if (l->ev[i].data.ptr == io)
			l->ev[i].data.ptr = NULL;
	if (io->kicked) {
		unlink_kicked(&l->kicked, io);
		unlink_kicked(&l->pending, io);
		io->kicked = false;
	}
	io->added = false;
	io->events = 0;
}

void floe_loop_io_kick(struct floe_loop *l, struct floe_io *io)
{
	if (!io->added || io->kicked)
		return;
	io->kicked = true;
	io->next_kicked = l->kicked;
	l->kicked = io;
}

/* --- timers (pairing heap) -------------------------------------------------------- */

/* Roots passed in have no sibling and no prev; the later deadline becomes the first
 * child of the earlier. */
static struct floe_timer *meld(struct floe_timer *a, struct floe_timer *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (b->deadline < a->deadline) {
		struct floe_timer *t = a;
		a = b;
		b = t;
	}
	b->prev = a;
	b->sibling = a->child;
	if (a->child)
		a->child->prev = b;
	a->child = b;
	return a;
}

/* The standard two passes: meld children pairwise left to right, then the pairs right
 * to left. */
static struct floe_timer *meld_children(struct floe_timer *first)
{
	struct floe_timer *pairs = NULL, *root = NULL;
	while (first) {
		struct floe_timer *a = first, *b = first->sibling;
		first = b ? b->sibling : NULL;
		a->sibling = a->prev = NULL;
		if (b)
			b->sibling = b->prev = NULL;
		struct floe_timer *m = meld(a, b);
		m->sibling = pairs;
		pairs = m;
	}
	while (pairs) {
		struct floe_timer *next = pairs->sibling;
		pairs->sibling = NULL;
		root = meld(root, pairs);
		pairs = next;
	}
	return root;
}

void floe_loop_timer_disarm(struct floe_loop *l, struct floe_timer *t)
{
	if (!t->armed)
		return;
	if (t == l->timers) {
		l->timers = meld_children(t->child);
	} else {
		/* prev is the parent for a first child, the left sibling otherwise. */
		if (t->prev->child == t)
			t->prev->child = t->sibling;
		else
			t->prev->sibling = t->sibling;
		if (t->sibling)
			t->sibling->prev = t->prev;
		l->timers = meld(l->timers, meld_children(t->child));
	}
	if (l->timers)
		l->timers->prev = NULL;
	t->child = t->sibling = t->prev = NULL;
	t->armed = false;
	l->ntimers--;
}

void floe_loop_timer_arm(struct floe_loop *l, struct floe_timer *t, int64_t deadline_ms)
{
	floe_loop_timer_disarm(l, t);
	t->deadline = deadline_ms;
	t->child = t->sibling = t->prev = NULL;
	t->armed = true;
	l->timers = meld(l->timers, t);
	l->ntimers++;
}

bool floe_loop_timer_armed(const struct floe_timer *t)
{
	return t->armed;
}

/* Fires the timers due at now, earliest first. A callback that re-arms its timer for a
 * time already past fires again, but at most as many times as there were timers: a
 * round always ends. */
static int fire_timers(struct floe_loop *l, int64_t now)
{
	size_t budget = l->ntimers;
	int n = 0;
	while (budget-- > 0 && l->timers && l->timers->deadline <= now) {
		struct floe_timer *t = l->timers;
		floe_loop_timer_disarm(l, t);
		t->cb(t);
		n++;
	}
	return n;
}

/* --- the round -------------------------------------------------------------------- */

static int wait_ms(struct floe_loop *l, int timeout_ms)
{
	if (l->kicked || atomic_load(&l->stop))
		return 0;
	if (!l->timers)
		return timeout_ms;
	int64_t d = l->timers->deadline - floe_loop_now(l);
	if (d <= 0)
		return 0;
	if (timeout_ms >= 0 && d > timeout_ms)
		return timeout_ms;
	return d > INT_MAX ? INT_MAX : (int)d;
}

static unsigned to_floe_events(uint32_t e)
{
	unsigned r = 0;
	if (e & EPOLLIN)
		r |= FLOE_IO_READ;
	if (e & EPOLLOUT)
		r |= FLOE_IO_WRITE;
	if (e & (EPOLLERR | EPOLLHUP | EPOLLRDHUP))
		r |= FLOE_IO_READ | FLOE_IO_HUP;
	return r;
}

int floe_loop_run_once(struct floe_loop *l, int timeout_ms)
{
	int n = epoll_wait(l->ep, l->ev, EVENTS, wait_ms(l, timeout_ms)), ran = 0;
	if (n < 0) {
		if (errno != EINTR)
			return -errno;
		n = 0;
	}
	/* Kicks from the previous round run in this one; new kicks wait for the next. */
	l->pending = l->kicked;
	l->kicked = NULL;
	l->nev = n;
	for (l->cur = 0; l->cur < n; l->cur++) {
		struct floe_io *io = l->ev[l->cur].data.ptr;
		if (!io)
			continue;
		io->cb(io, to_floe_events(l->ev[l->cur].events));
		ran++;
	}
	l->nev = l->cur = 0;
	while (l->pending) {
		struct floe_io *io = l->pending;
		l->pending = io->next_kicked;
		io->next_kicked = NULL;
		io->kicked = false;
		io->cb(io, FLOE_IO_READ);
		ran++;
	}
	return ran + fire_timers(l, floe_loop_now(l));
}

int floe_loop_run(struct floe_loop *l)
{
	while (!atomic_load(&l->stop)) {
		int rc = floe_loop_run_once(l, -1);
		if (rc < 0)
			return rc;
	}
	return 0;
}
