// A fixture for lint.layering.detects_violations: includes the layering
// allows, which must not be reported.
#include "kernel/arch/cpu.h"
#include "kernel/kern/console.h"
#include "lib/string.h"
#include <stdint.h>
