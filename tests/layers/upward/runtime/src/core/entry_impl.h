#pragma once
// Fixture: a public header of the memmap layer, included from core, spelled loosely.
// clang-format off
  #  include <tensordict/memmap.h>
