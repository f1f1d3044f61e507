// A fixture for lint.layering.detects_violations: the VM reaching up into
// proc, which the layering forbids.
#include "kernel/proc/process.h"
#include "kernel/vm/vmspace.h"
