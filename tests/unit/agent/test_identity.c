/* Unit tests for agent/state/identity: the installation file (made once, restored from
 * the checkpoint, continuing a checkpoint of a floe without installation ids, refused when
 * made on another machine, damaged and recovered from its copy or the checkpoint), the
 * machine id and the default agent id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/state/blobfile.h"
#include "agent/state/identity.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/floe-test-identity.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void write_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_machine_id(void **state)
{
	(void)state;
	char path[256], a[17], b[17];
	snprintf(path, sizeof(path), "%s/machine-id", dir);
	write_file("machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n");
	assert_int_equal(floe_identity_machine(path, a), 0);
	assert_int_equal(strlen(a), 16);
	/* Hashed, not the id itself, and stable. */
	assert_null(strstr("3d1219c7c4c5404aaa1f6d2a48adfda4", a));
	assert_int_equal(floe_identity_machine(path, b), 0);
	assert_string_equal(a, b);
	write_file("machine-id", "4d1219c7c4c5404aaa1f6d2a48adfda4");
	assert_int_equal(floe_identity_machine(path, b), 0);
	assert_string_not_equal(a, b);
	/* What is no machine id. */
	write_file("machine-id", "uninitialized\n");
	assert_int_equal(floe_identity_machine(path, a), -ENOENT);
	write_file("machine-id", "00000000000000000000000000000000\n");
	assert_int_equal(floe_identity_machine(path, a), -ENOENT);
	write_file("machine-id", "3D1219C7C4C5404AAA1F6D2A48ADFDA4\n");
	assert_int_equal(floe_identity_machine(path, a), -ENOENT);
	write_file("machine-id", "");
	assert_int_equal(floe_identity_machine(path, a), -ENOENT);
	snprintf(path, sizeof(path), "%s/absent", dir);
	assert_int_equal(floe_identity_machine(path, a), -ENOENT);
}

static void test_default_agent_id(void **state)
{
	(void)state;
	char id[65];
	floe_identity_default_agent_id("raspberrypi", "0123456789abcdef", id);
	assert_string_equal(id, "raspberrypi-0123456789abcdef");
	floe_identity_default_agent_id("my host!", "0123456789abcdef", id);
	assert_string_equal(id, "my-host--0123456789abcdef");
	floe_identity_default_agent_id("", "0123456789abcdef", id);
	assert_string_equal(id, "floe-0123456789abcdef");
	char longhost[100];
	memset(longhost, 'h', 99);
	longhost[99] = '\0';
	floe_identity_default_agent_id(longhost, "0123456789abcdef", id);
	assert_int_equal(strlen(id), 64);
	assert_string_equal(id + 47, "-0123456789abcdef");
}

/* An installation's home: none without hardware; the same for the same hardware,
 * machine id and state_dir; another for another of any of them. */
static void test_home(void **state)
{
	(void)state;
	char a[33], b[33];
	floe_identity_home(NULL, "0123456789abcdef", "/var/lib/floe", a);
	assert_string_equal(a, "");
	floe_identity_home("", "0123456789abcdef", "/var/lib/floe", a);
	assert_string_equal(a, "");
	floe_identity_home("hw1", "0123456789abcdef", "/var/lib/floe", a);
	assert_int_equal(strlen(a), 32);
	floe_identity_home("hw1", "0123456789abcdef", "/var/lib/floe", b);
	assert_string_equal(a, b);
	floe_identity_home("hw2", "0123456789abcdef", "/var/lib/floe", b);
	assert_string_not_equal(a, b);
	floe_identity_home("hw1", "", "/var/lib/floe", b);
	assert_string_not_equal(a, b);
	floe_identity_home("hw1", "0123456789abcdef", "/var/lib/floe2", b);
	assert_string_not_equal(a, b);
}

static void test_create_once(void **state)
{
	(void)state;
	struct floe_identity a, b;
	struct floe_err why = {0};
	assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", false, NULL, &a, &why),
			 -ENOENT);
	assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &a, &why),
			 0);
	assert_int_equal(strlen(a.installation), 36);
	assert_int_equal(a.installation[14], '4'); /* a version 4 UUID */
	assert_string_equal(a.machine, "0123456789abcdef");
	assert_string_equal(a.legacy_agent_id, "");
	assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &b, &why),
			 0);
	assert_string_equal(a.installation, b.installation);
	char hex[17];
	floe_identity_hex16(&a, hex);
	assert_int_equal(strlen(hex), 16);
	assert_int_equal(memcmp(hex, a.installation, 8), 0);
	/* On another machine: refused, saying what to do. */
	assert_int_equal(floe_identity_open(NULL, dir, "fedcba9876543210", true, NULL, &b, &why),
			 FLOE_EIDENTITY);
	assert_non_null(strstr(why.msg, "was made on another machine"));
	/* A machine without an id accepts it (containers). */
	assert_int_equal(floe_identity_open(NULL, dir, "", true, NULL, &b, &why), 0);
	/* The copy made beside it holds the same id. */
	char path[256];
	snprintf(path, sizeof(path), "%s/installation.copy", dir);
	uint8_t *blob = NULL;
	size_t len = 0;
	assert_int_equal(floe_blobfile_load(NULL, path, &blob, &len), 0);
	assert_int_equal(floe_identity_decode(NULL, (const char *)blob, len, &b), 0);
	assert_string_equal(a.installation, b.installation);
	floe_free(NULL, blob);
}

/* Processes racing to make the file agree on one id. */
static void test_create_race(void **state)
{
	(void)state;
	int fds[8][2];
	pid_t pids[8];
	for (int i = 0; i < 8; i++) {
		assert_int_equal(pipe(fds[i]), 0);
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct floe_identity id;
			struct floe_err why;
			if (floe_identity_open(NULL, dir, "", true, NULL, &id, &why) != 0)
				_exit(1);
			_exit(write(fds[i][1], id.installation, 36) == 36 ? 0 : 1);
		}
		close(fds[i][1]);
	}
	char first[37] = "", got[37];
	for (int i = 0; i < 8; i++) {
		int st;
		assert_int_equal(waitpid(pids[i], &st, 0), pids[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		assert_int_equal(read(fds[i][0], got, 36), 36);
		got[36] = '\0';
		close(fds[i][0]);
		if (!first[0])
			strcpy(first, got);
		assert_string_equal(first, got);
	}
}

static void save_checkpoint(const char *json)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/checkpoint", dir);
	assert_int_equal(floe_blobfile_save(path, (const uint8_t *)json, strlen(json)), 0);
}

/* A lost installation file comes back from the checkpoint; a checkpoint of a floe without
 * installation ids is continued under a new one. */
static void test_from_checkpoint(void **state)
{
	(void)state;
	struct floe_identity id;
	struct floe_err why = {0};
	save_checkpoint("{\"version\":2,\"installation\":\"5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b\","
			"\"agent_id\":\"x\",\"last_seq\":3,\"committed_seq\":2,\"committed_version\":3,"
			"\"positions\":\"\"}");
	assert_int_equal(floe_identity_open(NULL, dir, "", true, NULL, &id, &why), 0);
	assert_string_equal(id.installation, "5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b");
	assert_string_equal(id.legacy_agent_id, "");
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm %s/installation %s/installation.copy", dir, dir);
	assert_int_equal(system(cmd), 0);
	save_checkpoint("{\"version\":1,\"agent_id\":\"edge-017\",\"last_seq\":3,\"positions\":\"\"}");
	assert_int_equal(floe_identity_open(NULL, dir, "", true, NULL, &id, &why), 0);
	assert_string_not_equal(id.installation, "5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b");
	assert_string_equal(id.legacy_agent_id, "edge-017");
}

/* How a file is damaged. */
enum damage { TRUNCATED, ZEROS, GARBAGE, NDAMAGE };

static void damage(const char *name, enum damage how)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, how == TRUNCATED ? "r+" : "w");
	assert_non_null(fp);
	if (how == TRUNCATED)
		assert_int_equal(ftruncate(fileno(fp), 31), 0);
	for (int i = 0; how != TRUNCATED && i < 200; i++)
		fputc(how == ZEROS ? 0 : (i * 37 + 11) & 0xff, fp);
	fclose(fp);
}

static bool quarantined(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/quarantine/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A damaged installation file stops nothing: it is set aside and counted, and the same
 * installation continues from its copy, else from the checkpoint; only when neither names
 * it does a new one start (renewed). floe check (no create) only looks. */
static void test_damaged(void **state)
{
	(void)state;
	struct floe_identity a, b;
	struct floe_err why = {0};
	char cmd[256];
	for (int how = 0; how < NDAMAGE; how++) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s/*", dir);
		assert_int_equal(system(cmd), 0);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &a, &why), 0);
		/* The file alone: its copy answers. */
		damage("installation", (enum damage)how);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", false, NULL, &b, &why), 0);
		assert_string_equal(a.installation, b.installation);
		assert_false(quarantined("installation"));
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &b, &why), 0);
		assert_string_equal(a.installation, b.installation);
		assert_string_equal(b.machine, "0123456789abcdef");
		assert_int_equal(b.damaged, 1);
		assert_false(b.renewed);
		assert_true(quarantined("installation"));
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &b, &why), 0);
		assert_int_equal(b.damaged, 0);
		/* The copy alone: made again from the file. */
		damage("installation.copy", (enum damage)how);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &b, &why), 0);
		assert_string_equal(a.installation, b.installation);
		assert_int_equal(b.damaged, 1);
		assert_true(quarantined("installation.copy"));
		/* Both: the checkpoint names the installation. */
		save_checkpoint("{\"version\":2,\"installation\":\"5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b\","
				"\"agent_id\":\"x\",\"last_seq\":3,\"committed_seq\":2,\"committed_version\":3,"
				"\"positions\":\"\"}");
		damage("installation", (enum damage)how);
		damage("installation.copy", (enum damage)how);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &b, &why), 0);
		assert_string_equal(b.installation, "5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b");
		assert_int_equal(b.damaged, 2);
		assert_false(b.renewed);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &a, &why), 0);
		assert_string_equal(a.installation, b.installation);
		assert_int_equal(a.damaged, 0);
		/* All three: a new installation, said so. */
		damage("installation", (enum damage)how);
		damage("installation.copy", (enum damage)how);
		damage("checkpoint", (enum damage)how);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", false, NULL, &b, &why),
				 FLOE_ECORRUPT);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &b, &why), 0);
		assert_string_not_equal(b.installation, a.installation);
		assert_int_equal(b.damaged, 2);
		assert_true(b.renewed);
		assert_int_equal(floe_identity_open(NULL, dir, "0123456789abcdef", true, NULL, &a, &why), 0);
		assert_string_equal(a.installation, b.installation);
		assert_false(a.renewed);
	}
}

static void test_decode(void **state)
{
	(void)state;
	struct floe_identity id, back;
	memset(&id, 0, sizeof(id));
	strcpy(id.installation, "5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b");
	strcpy(id.machine, "0123456789abcdef");
	strcpy(id.legacy_agent_id, "edge-017");
	id.created_ms = 1764000000000;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 4096);
	assert_int_equal(floe_identity_encode(&id, &b), 0);
	assert_int_equal(floe_identity_decode(NULL, (const char *)b.data, b.len, &back), 0);
	assert_memory_equal(&id, &back, sizeof(id));
	floe_buf_fini(&b);
	static const char *const bad[] = {
	    "{\"version\":1,\"installation\":\"5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7\",\"created_ms\":1,"
	    "\"machine\":\"\",\"legacy_agent_id\":\"\"}",
	    "{\"version\":1,\"installation\":\"5C1E3A9F-0b2d-4e6f-8a1b-2c3d4e5f6a7b\",\"created_ms\":1,"
	    "\"machine\":\"\",\"legacy_agent_id\":\"\"}",
	    "{\"version\":1,\"installation\":\"5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b\",\"created_ms\":1,"
	    "\"machine\":\"0123\",\"legacy_agent_id\":\"\"}",
	    "{\"version\":1,\"installation\":\"5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b\",\"created_ms\":1,"
	    "\"machine\":\"\",\"legacy_agent_id\":\"a/b\"}",
	    "{\"version\":2,\"installation\":\"5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b\",\"created_ms\":1,"
	    "\"machine\":\"\",\"legacy_agent_id\":\"\"}",
	    "{\"version\":1}",
	    "[]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_not_equal(floe_identity_decode(NULL, bad[i], strlen(bad[i]), &back), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_machine_id, setup, teardown),
		cmocka_unit_test(test_default_agent_id),
		cmocka_unit_test(test_home),
		cmocka_unit_test_setup_teardown(test_create_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
