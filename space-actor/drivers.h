/*
 * drivers.h: the drivers this build has, by kind.
 *
 * The names of the kinds are common/status.h's one table (cm_driver_name,
 * cm_driver_parse); an instance's driver is parsed there once, as the
 * actor reads the instance, and the actor finds its driver here by kind.
 */
#ifndef ACT_DRIVERS_H
#define ACT_DRIVERS_H

#include "driver.h"
#include "status.h"

/* The driver of kind, or NULL for a kind this build has no driver for
 * (CM_DRIVER__COUNT included).  The ops are static: never freed. */
const struct act_driver_ops *act_driver_find(enum cm_driver kind);

#endif
