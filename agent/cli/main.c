/* floe: tails logs into Apache Iceberg tables. Dispatches to the subcommands. */
#include "agent/cli/commands.h"
#include "platform/fs_record.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: floe <command> [options]\n"
	"\n"
	"commands:\n"
	"  run -c FILE [--once]   run the agent (--once: read what is there, commit, exit)\n"
	"  check -c FILE          validate a configuration and print its effective values\n"
	"  inspect LOCATION       show an Iceberg table: snapshots and live data files\n"
	"  status -c FILE         what the agent did and whether it is healthy\n"
	"  maintain -c FILE       compact the table's small files of closed partitions\n"
	"  version                print the version\n"
	"\n"
	"'floe <command> --help' describes a command. Exit codes: 0 success, 1 runtime\n"
	"failure, 2 usage or configuration error, 3 state_dir in use by another process.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return FLOE_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	/* The power-cut tests' recording (a no-op unless built with FLOE_FS_RECORD). */
	int rec = floe_fs_record_from_env();
	if (rec) {
		fprintf(stderr, "floe: cannot record to FLOE_FS_RECORD: %s\n", strerror(-rec));
		return FLOE_EXIT_RUNTIME;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(usage, stdout);
		return FLOE_EXIT_OK;
	}
	if (strcmp(cmd, "run") == 0)
		return floe_cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return floe_cmd_check(argc - 1, argv + 1);
	if (strcmp(cmd, "status") == 0)
		return floe_cmd_status(argc - 1, argv + 1);
	if (strcmp(cmd, "maintain") == 0)
		return floe_cmd_maintain(argc - 1, argv + 1);
	if (strcmp(cmd, "inspect") == 0)
		return floe_cmd_inspect(argc - 1, argv + 1);
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0)
		return floe_cmd_version(argc - 1, argv + 1);
	fprintf(stderr, "floe: unknown command '%s'\n\n%s", cmd, usage);
	return FLOE_EXIT_USAGE;
}
