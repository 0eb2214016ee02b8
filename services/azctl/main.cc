// azctl: talks to any service of a run over its control socket (services/azctl/azctl.h).

#include "services/azctl/azctl.h"

int main(int argc, char** argv) { return az::azctl::RunAzctl(argc, argv); }
