// Filled by issue 16's work; see the header.
#include "precision/tensor.h"
