// A fixture for lint.layering.detects_violations: a port reaching into
// another port.
#include "arch/arm64/cpu.h"
#include "kernel/arch/cpu.h"
