/* Listening sockets: inet (UDP, TCP) and unix (datagram, stream), opened from a parsed URI,
 * with the kernel's drop counter on datagram sockets (SO_RXQ_OVFL on every recvmsg,
 * SO_MEMINFO on request) and unix socket files that are replaced only when stale. */
#include "listen.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sock_diag.h>
#include <netdb.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO 55
#endif

struct floe_listener {
	struct floe_listen_uri uri;
	int fd;
	uint16_t port;
	int rcvbuf;
	bool unix_file; /* a socket file of ours to remove at close */
	dev_t dev;	/* ... identified by device and inode */
	ino_t ino;
	uint32_t drops_seen; /* the kernel's cumulative drop counter, as last read */
	bool counts_drops;   /* SO_RXQ_OVFL could be set */
	struct floe_listener_stats st;
};

static int sock_type(enum floe_listen_transport t)
{
	return floe_listen_is_stream(t) ? SOCK_STREAM : SOCK_DGRAM;
}

/* SO_RCVBUFFORCE goes past net.core.rmem_max where floe may (CAP_NET_ADMIN); else the
 * plain option, which the kernel caps silently. */
static int set_rcvbuf(struct floe_listener *l, int bytes)
{
	if (bytes > 0 && setsockopt(l->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) &&
	    setsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)))
		return -errno;
	socklen_t n = sizeof(l->rcvbuf);
	if (getsockopt(l->fd, SOL_SOCKET, SO_RCVBUF, &l->rcvbuf, &n))
		return -errno;
	return 0;
}

/* Resolves the URI's host for a passive socket: the first address getaddrinfo gives. */
static int resolve(const struct floe_listen_uri *u, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = {0}, *res = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = sock_type(u->transport);
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV | (u->host_v6 ? AI_NUMERICHOST : 0);
	char port[8];
	port[0] = '0';
	port[1] = '\0';
	int rc = getaddrinfo(u->host, port, &hints, &res);
	if (rc)
		return rc == EAI_SYSTEM ? -errno : rc == EAI_MEMORY ? -ENOMEM : -EADDRNOTAVAIL;
	if (!res || res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return -EADDRNOTAVAIL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(u->port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(u->port);
	else
		return -EAFNOSUPPORT;
	return 0;
}

static int open_inet(struct floe_listener *l, const struct floe_listen_opts *o, const char **what)
{
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	int rc, one = 1, v6only = !o->dual_stack;
	if ((rc = resolve(&l->uri, &ss, &sl))) {
		*what = "cannot resolve the host";
		return rc;
	}
	l->fd = socket(ss.ss_family, sock_type(l->uri.transport) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		*what = "socket";
		return -errno;
	}
	/* Stream listeners rebind at once after a restart, with connections of the previous
	 * run still in TIME_WAIT. */
	if (floe_listen_is_stream(l->uri.transport) &&
	    setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		*what = "SO_REUSEADDR";
		return -errno;
	}
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(l->fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only))) {
		*what = "IPV6_V6ONLY";
		return -errno;
	}
	if (bind(l->fd, (struct sockaddr *)&ss, sl)) {
		*what = "bind";
		return -errno;
	}
	sl = sizeof(ss);
	if (getsockname(l->fd, (struct sockaddr *)&ss, &sl)) {
		*what = "getsockname";
		return -errno;
	}
	l->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/* A user or group given by name or by numeric id. */
static int lookup_id(const char *s, bool group, unsigned *id)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*s && *end == '\0' && errno == 0 && v <= 0xFFFFFFFEul) {
		*id = (unsigned)v;
		return 0;
	}
	char buf[4096];
	if (group) {
		struct group g, *r = NULL;
		int rc = getgrnam_r(s, &g, buf, sizeof(buf), &r);
		if (!r)
			return rc ? -rc : -ENOENT;
		*id = g.gr_gid;
	} else {
		struct passwd p, *r = NULL;
		int rc = getpwnam_r(s, &p, buf, sizeof(buf), &r);
		if (!r)
			return rc ? -rc : -ENOENT;
		*id = p.pw_uid;
	}
	return 0;
}

/* A path that exists is replaced only when it is a socket of no live listener: connecting
 * to it is refused. Anything else (a live socket, a socket of the other type, a full
 * backlog, a regular file) is left alone. The check and the unlink are not atomic; two
 * floe instances started on one path at the same instant could both see it stale. */
static int clear_stale(const struct sockaddr_un *sun, int type, const char **what)
{
	struct stat st;
	if (lstat(sun->sun_path, &st)) {
		if (errno == ENOENT)
			return 0;
		*what = "stat of the socket path";
		return -errno;
	}
	if (!S_ISSOCK(st.st_mode)) {
		*what = "the socket path exists and is not a socket";
		return -EEXIST;
	}
	int probe = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (probe < 0) {
		*what = "socket";
		return -errno;
	}
	int rc = connect(probe, (const struct sockaddr *)sun, sizeof(*sun)) ? errno : 0;
	close(probe);
	if (rc != ECONNREFUSED) {
		*what = "a live socket listens on the path";
		return -EADDRINUSE;
	}
	if (unlink(sun->sun_path) && errno != ENOENT) {
		*what = "unlink of the stale socket";
		return -errno;
	}
	return 0;
}

/* Sets the socket file's owner and mode. A stream socket is not listening yet, so no peer
 * can connect before they are set; a datagram one could take a message sent in between
 * by someone the umask let in, which grants nothing they could not already do. */
static int set_owner_mode(const char *path, const struct floe_listen_opts *o, const char **what)
{
	unsigned uid = (unsigned)-1, gid = (unsigned)-1;
	int rc;
	if (o->owner && (rc = lookup_id(o->owner, false, &uid))) {
		*what = "unknown owner (user)";
		return rc;
	}
	if (o->group && (rc = lookup_id(o->group, true, &gid))) {
		*what = "unknown group";
		return rc;
	}
	if ((o->owner || o->group) && chown(path, (uid_t)uid, (gid_t)gid)) {
		*what = "chown of the socket file";
		return -errno;
	}
	if (o->mode && chmod(path, (mode_t)(o->mode & 07777))) {
		*what = "chmod of the socket file";
		return -errno;
	}
	return 0;
}

static int open_unix(struct floe_listener *l, const struct floe_listen_opts *o, const char **what)
{
	struct sockaddr_un sun = {0};
	int type = sock_type(l->uri.transport), rc;
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, l->uri.path, strlen(l->uri.path) + 1);
	if ((rc = clear_stale(&sun, type, what)))
		return rc;
	l->fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		*what = "socket";
		return -errno;
	}
	if (bind(l->fd, (struct sockaddr *)&sun, sizeof(sun))) {
		*what = "bind";
		return -errno;
	}
	struct stat st;
	if (stat(sun.sun_path, &st)) {
		*what = "stat of the socket file";
		return -errno;
	}
	l->unix_file = true;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	return set_owner_mode(sun.sun_path, o, what);
}

int floe_listener_open(const struct floe_listen_uri *u, const struct floe_listen_opts *o,
		       struct floe_listener **out, const char **what)
{
	static const struct floe_listen_opts defaults;
	const char *dummy;
	int rc, one = 1;
	if (!o)
		o = &defaults;
	if (!what)
		what = &dummy;
	*what = "";
	struct floe_listener *l = calloc(1, sizeof(*l));
	if (!l) {
		*what = "out of memory";
		return -ENOMEM;
	}
	l->uri = *u;
	l->fd = -1;
	bool is_unix = u->transport == FLOE_LISTEN_UNIX || u->transport == FLOE_LISTEN_UNIX_STREAM;
	if ((rc = is_unix ? open_unix(l, o, what) : open_inet(l, o, what)))
		goto err;
	if ((rc = set_rcvbuf(l, o->rcvbuf))) {
		*what = "SO_RCVBUF";
		goto err;
	}
	if (!floe_listen_is_stream(u->transport)) {
		/* The kernel then attaches its drop counter to every datagram it queues.
		 * Every Linux since 2.6.33 has it; only an emulator (qemu-user 7.2) says
		 * ENOPROTOOPT, and the listener then works without the count, which
		 * floe_listener_counts_drops tells the caller to say. */
		l->counts_drops = true;
		if (setsockopt(l->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one))) {
			if (errno != ENOPROTOOPT) {
				rc = -errno;
				*what = "SO_RXQ_OVFL";
				goto err;
			}
			l->counts_drops = false;
		}
	} else if (listen(l->fd, o->backlog > 0 ? o->backlog : SOMAXCONN)) {
		rc = -errno;
		*what = "listen";
		goto err;
	}
	*out = l;
	return 0;
err:
	floe_listener_close(l);
	return rc;
}

void floe_listener_close(struct floe_listener *l)
{
	if (!l)
		return;
	struct stat st;
	if (l->unix_file && stat(l->uri.path, &st) == 0 && st.st_dev == l->dev &&
	    st.st_ino == l->ino)
		unlink(l->uri.path);
	if (l->fd >= 0)
		close(l->fd);
	free(l);
}

int floe_listener_fd(const struct floe_listener *l)
{
	return l->fd;
}

enum floe_listen_transport floe_listener_transport(const struct floe_listener *l)
{
	return l->uri.transport;
}

const struct floe_listen_uri *floe_listener_uri(const struct floe_listener *l)
{
	return &l->uri;
}

uint16_t floe_listener_port(const struct floe_listener *l)
{
	return l->port;
}

int floe_listener_rcvbuf(const struct floe_listener *l)
{
	return l->rcvbuf;
}

bool floe_listener_counts_drops(const struct floe_listener *l)
{
	return l->counts_drops;
}

static void keep_peer(union floe_sockaddr *peer, const struct sockaddr_storage *ss, socklen_t n)
{
	memset(peer, 0, sizeof(*peer));
	if (ss->ss_family == AF_INET && n >= sizeof(peer->in))
		memcpy(&peer->in, ss, sizeof(peer->in));
	else if (ss->ss_family == AF_INET6 && n >= sizeof(peer->in6))
		memcpy(&peer->in6, ss, sizeof(peer->in6));
	else if (ss->ss_family == AF_UNIX)
		peer->sa.sa_family = AF_UNIX;
}

int floe_listener_accept(struct floe_listener *l, int *fd, union floe_sockaddr *peer)
{
	/* Each skipped error took one connection off the queue; the bound only guards
	 * against an error that would repeat without doing so. */
	for (int tries = 0;; tries++) {
		struct sockaddr_storage ss;
		socklen_t n = sizeof(ss);
		int c = accept4(l->fd, (struct sockaddr *)&ss, &n, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c >= 0) {
			if (peer)
				keep_peer(peer, &ss, n);
			*fd = c;
			return 1;
		}
		switch (errno) {
		case EAGAIN:
#if EWOULDBLOCK != EAGAIN
		case EWOULDBLOCK:
#endif
			return 0;
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			return -errno;
		case EBADF:
		case EINVAL:
		case ENOTSOCK:
		case EOPNOTSUPP:
		case EFAULT:
			return -errno; /* our bug, not the peer's */
		default:
			/* ECONNABORTED, EPROTO, EINTR and the network errors accept(2) says
			 * to treat like EAGAIN and retry: that connection is gone. */
			if (tries >= 64)
				return 0;
			continue;
		}
	}
}

/* Adds what the kernel's cumulative 32-bit drop counter rose by since it was last seen.
 * Both sources read the same counter (sk_drops); a value behind the last one seen (an
 * older datagram's stamp after a SO_MEMINFO read) adds nothing. */
static void note_drops(struct floe_listener *l, uint32_t now)
{
	uint32_t d = now - l->drops_seen;
	if (d == 0 || d > 0x80000000u)
		return;
	l->st.kernel_drops += d;
	l->drops_seen = now;
}

int floe_listener_recv(struct floe_listener *l, char *buf, size_t cap, struct floe_dgram *d)
{
	struct sockaddr_storage ss;
	struct iovec iov = {buf, cap};
	union {
		char b[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct msghdr m = {0};
	m.msg_name = &ss;
	m.msg_namelen = sizeof(ss);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.b;
	m.msg_controllen = sizeof(ctl.b);
	ssize_t n;
	do
		n = recvmsg(l->fd, &m, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
		    c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
			uint32_t v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			note_drops(l, v);
		}
	}
	d->p = buf;
	d->len = (size_t)n;
	d->truncated = (m.msg_flags & MSG_TRUNC) != 0;
	if (m.msg_namelen > 0) {
		keep_peer(&d->peer, &ss, m.msg_namelen);
	} else {
		/* An unbound sender on a unix socket has no name. */
		memset(&d->peer, 0, sizeof(d->peer));
		if (l->uri.transport == FLOE_LISTEN_UNIX)
			d->peer.sa.sa_family = AF_UNIX;
	}
	l->st.datagrams++;
	l->st.bytes += (uint64_t)n;
	l->st.truncated += d->truncated;
	return 1;
}

int floe_listener_sync_drops(struct floe_listener *l)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t n = sizeof(mem);
	if (getsockopt(l->fd, SOL_SOCKET, SO_MEMINFO, mem, &n))
		return -errno;
	if (n < (SK_MEMINFO_DROPS + 1) * sizeof(uint32_t))
		return -ENOPROTOOPT;
	note_drops(l, mem[SK_MEMINFO_DROPS]);
	return 0;
}

void floe_listener_stats(const struct floe_listener *l, struct floe_listener_stats *st)
{
	*st = l->st;
}
