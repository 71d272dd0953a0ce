/* Tests of platform/machine: a machine tree of its own (as FLOE_TEST_MACHINE_ROOT gives
 * one): physical network devices with permanent addresses count, in any order of
 * discovery; virtual devices, random or set addresses and the all-zero one do not; a
 * device tree serial counts, a DMI UUID (root's only) does not; a machine that says
 * nothing is -ENOENT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/machine.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text)
{
	char p[256], cmd[320];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A network device: physical (a device entry) or not, its address and its kind. */
static void netdev(const char *name, bool physical, const char *type, const char *mac)
{
	char p[128];
	if (physical) {
		snprintf(p, sizeof(p), "sys/class/net/%s/device/uevent", name);
		put(p, "");
	}
	snprintf(p, sizeof(p), "sys/class/net/%s/addr_assign_type", name);
	put(p, type);
	snprintf(p, sizeof(p), "sys/class/net/%s/address", name);
	put(p, mac);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/floe-test-machine.XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void test_nothing(void **state)
{
	(void)state;
	char out[FLOE_MACHINE_HW_HEX + 1];
	assert_int_equal(floe_machine_hardware(root, out), -ENOENT);
	/* Only what does not count: loopback, a bridge, a random address, zeros. */
	netdev("lo", false, "0\n", "00:00:00:00:00:00\n");
	netdev("br0", false, "3\n", "02:42:ac:11:00:02\n");
	netdev("wlan0", true, "1\n", "7a:11:22:33:44:55\n");
	netdev("eth9", true, "0\n", "00:00:00:00:00:00\n");
	assert_int_equal(floe_machine_hardware(root, out), -ENOENT);
}

static void test_devices(void **state)
{
	(void)state;
	char a[FLOE_MACHINE_HW_HEX + 1], b[FLOE_MACHINE_HW_HEX + 1], c[FLOE_MACHINE_HW_HEX + 1];
	netdev("lo", false, "0\n", "00:00:00:00:00:00\n");
	netdev("eth0", true, "0\n", "b8:27:eb:00:00:01\n");
	assert_int_equal(floe_machine_hardware(root, a), 0);
	assert_int_equal(strlen(a), FLOE_MACHINE_HW_HEX);
	/* Virtual and random devices change nothing. */
	netdev("veth1", false, "0\n", "0a:58:0a:f4:00:01\n");
	netdev("wlan0", true, "1\n", "7a:11:22:33:44:55\n");
	assert_int_equal(floe_machine_hardware(root, b), 0);
	assert_string_equal(a, b);
	/* A second NIC does, whatever its name sorts as. */
	netdev("aaa0", true, "0\n", "b8:27:eb:00:00:02\n");
	assert_int_equal(floe_machine_hardware(root, b), 0);
	assert_string_not_equal(a, b);
	/* Other hardware: another address. */
	netdev("eth0", true, "0\n", "b8:27:eb:00:00:03\n");
	assert_int_equal(floe_machine_hardware(root, c), 0);
	assert_string_not_equal(b, c);
}

static void test_serials(void **state)
{
	(void)state;
	char a[FLOE_MACHINE_HW_HEX + 1], b[FLOE_MACHINE_HW_HEX + 1];
	/* A board's serial ends with its NUL. */
	put("sys/firmware/devicetree/base/serial-number", "10000000abcdef01");
	assert_int_equal(floe_machine_hardware(root, a), 0);
	put("sys/firmware/devicetree/base/serial-number", "10000000abcdef02");
	assert_int_equal(floe_machine_hardware(root, b), 0);
	assert_string_not_equal(a, b);
	put("sys/class/dmi/id/product_uuid", "4c4c4544-0042-3510-8052-b4c04f384d32\n");
	assert_int_equal(floe_machine_hardware(root, a), 0);
	assert_string_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_serials, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
