#pragma once
// Fixture: a memmap header, for the relative include of lazy/stack.h.
