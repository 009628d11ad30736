// Planted for layers:upward_stage_refused: the model reaching the emitters.
#pragma once

#include "emit/names.h"
