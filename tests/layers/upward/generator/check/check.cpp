// Planted for layers:upward_stage_refused: a check reaching the driver, and a lower stage (fine).
#include "model/kinds.h"
#include "driver/driver.h"
