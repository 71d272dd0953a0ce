/* Unit tests for agent/state/identity: the installation file (made once, restored from
 * the checkpoint, continuing a checkpoint of a floe without installation ids, refused when
 * made on another machine), the machine id and the default agent id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
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
	/* Damaged: refused with the path. */
	char path[256];
	snprintf(path, sizeof(path), "%s/installation", dir);
	FILE *fp = fopen(path, "r+");
	fseek(fp, 30, SEEK_SET);
	fputc('X', fp);
	fclose(fp);
	assert_int_equal(floe_identity_open(NULL, dir, "", true, NULL, &b, &why), FLOE_ECORRUPT);
	assert_non_null(strstr(why.msg, path));
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
	snprintf(cmd, sizeof(cmd), "rm %s/installation", dir);
	assert_int_equal(system(cmd), 0);
	save_checkpoint("{\"version\":1,\"agent_id\":\"edge-017\",\"last_seq\":3,\"positions\":\"\"}");
	assert_int_equal(floe_identity_open(NULL, dir, "", true, NULL, &id, &why), 0);
	assert_string_not_equal(id.installation, "5c1e3a9f-0b2d-4e6f-8a1b-2c3d4e5f6a7b");
	assert_string_equal(id.legacy_agent_id, "edge-017");
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
		cmocka_unit_test_setup_teardown(test_create_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_checkpoint, setup, teardown),
		cmocka_unit_test(test_decode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
