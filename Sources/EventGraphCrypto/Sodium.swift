internal import CSodium

/// libsodium's one-time initialisation, done on first use by any API of the module.
///
/// `sodium_init` picks the fastest implementations for the processor and makes sure the
/// random number generator is ready; it is safe to call from several threads, and a
/// `static let` runs it exactly once. It can fail only where the system offers no source
/// of randomness, in which case nothing here can work.
enum Sodium {
  private static let initialised: Bool = sodium_init() >= 0

  /// Throws ``CryptoError/Code/libsodium`` if libsodium could not be initialised.
  static func ready() throws(CryptoError) {
    guard initialised else {
      throw CryptoError(
        code: .libsodium, path: nil,
        message: "libsodium could not be initialised (sodium_init failed): the system offers no source of randomness.")
    }
  }

  /// Stops the program if libsodium could not be initialised, for the APIs that cannot
  /// throw (sealing and random keys have no meaningful result without it).
  static func readyOrTrap() {
    precondition(initialised, "libsodium could not be initialised (sodium_init failed)")
  }
}

/// Runs `body` with the bytes of `collection` contiguous in memory, without copying them
/// when the collection already is (an `Array`, a slice of one, `Data`).
///
/// A copy made for a collection that is not contiguous is zeroed before it is freed, as it
/// may hold a plaintext.
func withContiguousBytes<C: Collection<UInt8>, R>(
  of collection: C, _ body: (UnsafeRawBufferPointer) throws -> R
) rethrows -> R {
  if let result = try collection.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
    return result
  }
  var copy = Array(collection)
  defer {
    // SAFETY: the buffer is `copy`'s own storage, `copy.count` bytes long, and lives
    // through the call.
    copy.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
  }
  return try copy.withUnsafeBytes { try body($0) }
}
