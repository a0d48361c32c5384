#ifndef EVENTGRAPH_CSODIUM_SHIM_H
#define EVENTGRAPH_CSODIUM_SHIM_H
// libsodium (Debian's libsodium-dev), the only cryptography of the package: the sealing of
// personal data, the wrapping of its keys and the blind indexes, all in EventGraphCrypto.
#include <sodium.h>
#endif
