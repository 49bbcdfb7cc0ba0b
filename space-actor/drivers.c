/*
 * drivers.c: the table of drivers by kind (drivers.h).
 */
#include "drivers.h"

static const struct act_driver_ops *const drivers[CM_DRIVER__COUNT] = {
    [CM_DRIVER_MANAGED] = &act_driver_managed,
    [CM_DRIVER_CDP] = &act_driver_cdp,
    [CM_DRIVER_FAKE] = &act_driver_fake,
};

const struct act_driver_ops *
act_driver_find(enum cm_driver kind)
{
	return (unsigned)kind < CM_DRIVER__COUNT ? drivers[kind] : NULL;
}
