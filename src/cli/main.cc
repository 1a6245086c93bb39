// plumb: measures an AI training cluster before anyone trusts it with a long run.
#include "cli/command.h"

int main(int argc, char** argv) { return plumb::cli::run_main(argc, argv); }
