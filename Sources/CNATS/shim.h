#ifndef EVENTGRAPH_CNATS_SHIM_H
#define EVENTGRAPH_CNATS_SHIM_H
#include <nats/nats.h>
#endif
