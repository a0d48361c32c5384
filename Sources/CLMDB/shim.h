#ifndef EVENTGRAPH_CLMDB_SHIM_H
#define EVENTGRAPH_CLMDB_SHIM_H
#include <lmdb.h>
#endif
