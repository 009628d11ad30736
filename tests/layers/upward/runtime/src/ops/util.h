#pragma once
// Fixture: ops includes the internal header of the memmap layer.
#include "lazy/stack.h"
#include "tensordict/internal.h"
