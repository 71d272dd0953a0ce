/* The room a seal may take on state_dir's file system: asked of the file system at the
 * start and after each seal, so that a backlog larger than the disk goes in smaller
 * entries and a full disk makes the inputs wait instead of failing a seal. A leaf of the
 * run layer: it calls nothing of the runner's, so both the start (runner.c) and the
 * spool policy (runner_handoff.c) can. */
#include "agent/run/runner_impl.h"

#include "platform/fs.h"

#include <stdint.h>

/* Room kept free on state_dir's file system for what is not the batch: checkpoints,
 * metrics, the aggregations' images, a seal's index (an eighth of a small file system). */
#define DISK_RESERVE (2u << 20)
/* A seal smaller than this would be mostly its files' fixed parts: below, the inputs
 * wait for commits to make room instead (a sixteenth of a small file system). */
#define DISK_MIN_SEAL (256u << 10)

bool floe_runner_update_room(struct floe_runner *r)
{
	uint64_t avail = 0, total = 0;
	/* A file system that cannot say is taken as roomy: writes then fail as before. */
	if (floe_fs_space(r->set.state_dir, &avail, &total) != 0) {
		r->b.room = UINT64_MAX;
		r->lake.disk_low = false;
		return false;
	}
	r->lake.disk_avail = avail;
	uint64_t reserve = total / 8 < DISK_RESERVE ? total / 8 : DISK_RESERVE;
	uint64_t min_seal = total / 16 < DISK_MIN_SEAL ? total / 16 : DISK_MIN_SEAL;
	/* Half of what is free: the batch's files grow with its rows and may take more
	 * bytes than the lines they hold (compression aside, each file has fixed parts). */
	r->b.room = avail > reserve ? (avail - reserve) / 2 : 0;
	r->lake.disk_low = r->b.room < min_seal;
	return r->lake.disk_low;
}
