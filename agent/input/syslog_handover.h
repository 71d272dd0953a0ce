/* Listening sockets handed from one configuration's syslog inputs to the next's at a
 * reload (SIGHUP). A listener whose address, socket options and TLS files the next
 * configuration lists unchanged is not closed when its input is freed: it waits here,
 * open, and the next configuration's input takes it instead of binding anew. Meanwhile
 * the kernel keeps what comes (datagrams in the socket's receive buffer, where it counts
 * what overflows; connections in the backlog), so a reload neither refuses a sender nor
 * loses a datagram without a count. A listener the next configuration changed or dropped
 * is closed, and a changed one opened anew by its input.
 *
 * The connections a listener had accepted belong to its input's server and close with
 * it (their half-sent frames kept, counted at_close); the senders connect again at once,
 * to the same socket. Main thread only. Outside the memory budget, as the process's
 * carry that holds it (agent/run/runner.h): it outlives the budgets of the runners. */
#ifndef FLOE_SYSLOG_HANDOVER_H
#define FLOE_SYSLOG_HANDOVER_H

#include <stdbool.h>
#include <stddef.h>

struct floe_config;
struct floe_config_input;
struct floe_listener;
struct floe_syslog_handover;

int floe_syslog_handover_new(struct floe_syslog_handover **out);
/* Closes every listener nobody took. NULL is fine. */
void floe_syslog_handover_free(struct floe_syslog_handover *h);
/* next (borrowed until the next call) is the configuration that takes over; NULL: none
 * (a stop, or the next configuration's inputs are open). */
void floe_syslog_handover_expect(struct floe_syslog_handover *h, const struct floe_config *next);
/* Whether the configuration expected next lists listener listen of input cfg (borrowed)
 * the same way. h may be NULL (false). */
bool floe_syslog_handover_wanted(const struct floe_syslog_handover *h,
				 const struct floe_config_input *cfg, const char *listen);
/* Keeps l (taken: it is h's now) for the next configuration, as listener listen of an
 * input like cfg. False when it cannot (no memory): the caller closes l. */
bool floe_syslog_handover_put(struct floe_syslog_handover *h, const struct floe_config_input *cfg,
			      const char *listen, struct floe_listener *l);
/* The listener kept for listen of an input like cfg, now the caller's, or NULL (none:
 * the caller opens one). h may be NULL. */
struct floe_listener *floe_syslog_handover_take(struct floe_syslog_handover *h,
						const struct floe_config_input *cfg,
						const char *listen);
/* Closes the listeners no input took (the next configuration's inputs are open). */
void floe_syslog_handover_close_rest(struct floe_syslog_handover *h);

/* Whole inputs. An input the next configuration lists unchanged (at the same position,
 * with the same name and every syslog setting the same) is not closed at all: its
 * listeners, its connections, what its framers hold and its queue go on into the next
 * configuration (input_syslog.c keeps it). Its key (every setting, the position and the
 * name) is written into out (cap bytes): its length, 0 when cfg is not a syslog input
 * or does not fit. */
#define FLOE_SYSLOG_KEY_MAX 8192 /* a key's room: a URI, options, names and TLS paths */
size_t floe_syslog_handover_input_key(const struct floe_config_input *cfg, size_t index, char *out,
				      size_t cap);
/* Whether the configuration expected next lists input index, cfg, unchanged. */
bool floe_syslog_handover_keeps(const struct floe_syslog_handover *h,
				const struct floe_config_input *cfg, size_t index);
/* Whether a configuration is expected next (a reload is under way). */
bool floe_syslog_handover_expecting(const struct floe_syslog_handover *h);

#endif
