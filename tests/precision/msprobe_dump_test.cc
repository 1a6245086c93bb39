// Filled by issue 16's work.
