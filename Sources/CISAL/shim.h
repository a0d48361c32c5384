#ifndef EVENTGRAPH_CISAL_SHIM_H
#define EVENTGRAPH_CISAL_SHIM_H
#include <isa-l/crc.h>
#endif
