#include "lib/collectives/dtype.h"
