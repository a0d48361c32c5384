internal import CSodium

/// A keyed hash for blind indexes: BLAKE2b (libsodium's `crypto_generichash`) keyed with a
/// 32-byte key.
///
/// Equal inputs under one key give equal hashes, so an index of hashes finds a value
/// without storing it; without the key, a hash tells nothing of the value, and erasing the
/// key leaves the index as meaningless bytes.
///
/// ```swift
/// let entry = BlindHash.hash(Array(email.lowercased().utf8), key: indexKey)
/// ```
public enum BlindHash {
  /// Hashes `bytes` under `key`.
  ///
  /// - Parameters:
  ///   - length: the hash's length in bytes, 16 to 64 (BLAKE2b's limits in libsodium);
  ///     16 by default.
  /// - Returns: `length` bytes.
  public static func hash(_ bytes: some Collection<UInt8>, key: SymmetricKey, length: Int = 16) -> [UInt8] {
    Sodium.readyOrTrap()
    let shortest = Int(crypto_generichash_BYTES_MIN)
    let longest = Int(crypto_generichash_BYTES_MAX)
    precondition(
      (shortest...longest).contains(length), "BlindHash length \(length) is outside \(shortest)...\(longest)")
    return withContiguousBytes(of: bytes) { input in
      key.withBytes { k in
        [UInt8](unsafeUninitializedCapacity: length) { output, count in
          // SAFETY: `output` has room for `length` bytes, which is what libsodium writes;
          // the input and the key are valid for their lengths through the call.
          guard let out = output.baseAddress else { preconditionFailure("empty output buffer") }
          let rc = crypto_generichash(
            out, length,
            input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
            k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count)
          precondition(rc == 0, "crypto_generichash failed")
          count = length
        }
      }
    }
  }
}
