#ifndef EVENTGRAPH_CSQLITE_SHIM_H
#define EVENTGRAPH_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
