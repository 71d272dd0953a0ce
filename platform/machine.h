/* What tells this machine's hardware from another's, for an installation's "home"
 * (agent/state/identity.h): the permanent MAC addresses of its physical network devices
 * and its device tree's serial number (boards), which any user may read. Not the DMI
 * product UUID: only root may read it on most systems, and the service's user and root
 * by hand must see one machine. Not /etc/machine-id: that is what a cloned device image
 * shares. A container sees only its virtual devices: it has none. */
#ifndef FLOE_PLATFORM_MACHINE_H
#define FLOE_PLATFORM_MACHINE_H

#define FLOE_MACHINE_HW_HEX 64

/* Hex SHA-256 of what the machine under root ("" for "/"; NULL: the one the environment's
 * FLOE_TEST_MACHINE_ROOT names, for tests, else "/") says of its hardware, into out.
 * -ENOENT when it says nothing. */
int floe_machine_hardware(const char *root, char out[FLOE_MACHINE_HW_HEX + 1]);

#endif
