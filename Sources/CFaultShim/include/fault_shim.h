#ifndef EVENTGRAPH_FAULT_SHIM_H
#define EVENTGRAPH_FAULT_SHIM_H
// A test's disk that fails: loaded with LD_PRELOAD into a child process (never linked
// into the library), it makes the n-th write or sync of a matching file fail.
// Configured by the environment (Tests/EventToolTests/DiskFaultTests.swift):
//   EG_FAULT=KIND:N:RESULT  KIND write (write, pwrite, writev, pwritev) or sync (fsync,
//                           fdatasync); N the call to fail, counted from 1 among the calls
//                           of that kind on matching files; RESULT EIO, ENOSPC or SHORT
//                           (a write of half the bytes, reported as such)
//   EG_FAULT_PATH=TEXT      only files whose path contains TEXT count (default: all)
//   EG_FAULT_LOG=FILE       where a line "KIND N PATH" is appended when the fault is made
//   EG_FAULT_COUNTS=FILE    where the calls of each kind on matching files are written at
//                           exit ("write N", "sync N")
//   EG_RECORD=FILE          every write and sync of matching files, and what is written to
//                           standard output, recorded in order (fault_shim.c says how), for
//                           the power-loss tests' crash states
int eventgraph_fault_shim_loaded(void);
#endif
