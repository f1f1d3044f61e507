// The machine-independent page-fault entry point (see vmspace.h).
#pragma once
#include "kernel/vm/vmspace.h"
